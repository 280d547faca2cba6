import ArgumentParser
import KeyhostFiles
import KeyhostCrypto

/// The message to sign or verify: an argument, `-` for standard input, or --file. Bytes are taken exactly as
/// given (a trailing newline from `echo` is part of the message: use printf '%s' or --file).
struct MessageOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The message (UTF-8 text); - reads it from standard input.", valueName: "message"))
    var message: String?

    @Option(help: ArgumentHelp("Read the message from FILE, bytes exactly as stored (at most 16 MiB).", valueName: "file"))
    var file: String?

    @Flag(help: "The message is hex (0x optional, surrounding whitespace ignored): sign or check the bytes it encodes.")
    var hex = false

    /// The largest message read from a file or standard input.
    static let limit = 16 * BoundedFile.mebibyte

    func validate() throws {
        switch (message, file) {
        case (nil, nil): throw ValidationError("give the message: as an argument, - for standard input, or --file FILE")
        case (.some, .some): throw ValidationError("give the message once: as an argument or with --file, not both")
        default: break
        }
        if hex, let message, message != "-" { _ = try Self.decodeHex(Array(message.utf8)) }
    }

    func bytes() throws -> [UInt8] {
        let raw: [UInt8]
        do {
            if let file { raw = try BoundedFile.read(file, limit: Self.limit) }
            else if message == "-" { raw = try BoundedFile.readStandardInput(limit: Self.limit) }
            else { raw = Array((message ?? "").utf8) }
        } catch {
            throw Failure.kind("io", "cannot read the message: \(error)")
        }
        return hex ? try Self.decodeHex(raw) : raw
    }

    /// The bytes hex text encodes; a ValidationError (status 64) names what is wrong, never the text.
    static func decodeHex(_ raw: [UInt8]) throws -> [UInt8] {
        var text = String(decoding: raw, as: UTF8.self).trimmingWhitespaceAndNewlines()
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text = String(text.dropFirst(2)) }
        // Hex.decode has its own size limit (an APDU's worth); messages may be larger, so digits are checked here.
        guard text.utf8.count % 2 == 0, text.utf8.allSatisfy({ Self.isHexDigit($0) }) else {
            throw ValidationError("--hex: the message is not hex (an even number of digits 0-9, a-f, 0x optional)")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for c in text.utf8 {
            let nibble = Self.nibble(c)
            if let h = high { bytes.append(h << 4 | nibble); high = nil } else { high = nibble }
        }
        return bytes
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }

    private static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        default: return c &- 0x61 &+ 10
        }
    }
}
