import ArgumentParser
import KeyhostFiles

/// The message to sign or verify: an argument, `-` for standard input, or --file. Bytes are taken exactly as
/// given (a trailing newline from `echo` is part of the message: use printf '%s' or --file).
struct MessageOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The message (UTF-8 text); - reads it from standard input.", valueName: "message"))
    var message: String?

    @Option(help: ArgumentHelp("Read the message from FILE, bytes exactly as stored (at most 16 MiB).", valueName: "file"))
    var file: String?

    /// The largest message read from a file or standard input.
    static let limit = 16 * BoundedFile.mebibyte

    func validate() throws {
        switch (message, file) {
        case (nil, nil): throw ValidationError("give the message: as an argument, - for standard input, or --file FILE")
        case (.some, .some): throw ValidationError("give the message once: as an argument or with --file, not both")
        default: break
        }
    }

    func bytes() throws -> [UInt8] {
        do {
            if let file { return try BoundedFile.read(file, limit: Self.limit) }
            if message == "-" { return try BoundedFile.readStandardInput(limit: Self.limit) }
        } catch {
            throw Failure.kind("io", "cannot read the message: \(error)")
        }
        return Array((message ?? "").utf8)
    }
}
