import ArgumentParser
import LuaRuntime

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a Lua script.",
        discussion: """
            The script sees its arguments as '...' and in the global table 'arg' (arg[0] is the \
            script), as with the standalone lua interpreter. Exit status: 0 on success, 1 on an \
            uncaught error (message and traceback on standard error), n after os.exit(n).
            """
    )

    @Argument(help: ArgumentHelp("The script, or - for standard input.", valueName: "file"))
    var file: String

    @Flag(help: "Run untrusted code: no io, os, debug, package or binary chunks, with the limits below.")
    var sandbox = false

    @Option(help: ArgumentHelp("Sandbox memory cap in MiB.", valueName: "mib"))
    var memoryLimit: Int = 64

    @Option(help: ArgumentHelp("Sandbox instruction budget.", valueName: "count"))
    var instructionLimit: UInt64 = 100_000_000

    @Option(help: ArgumentHelp("Sandbox wall-clock limit in seconds.", valueName: "seconds"))
    var timeLimit: Double = 5

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Arguments passed to the script.", valueName: "args"))
    var arguments: [String] = []

    func validate() throws {
        guard memoryLimit > 0, memoryLimit <= 1 << 20 else { throw ValidationError("--memory-limit must be between 1 and 1048576 MiB, got \(memoryLimit)") }
        guard timeLimit > 0 else { throw ValidationError("--time-limit must be a positive number of seconds, got \(timeLimit)") }
    }

    func run() throws {
        let limits = SandboxLimits(memoryBytes: memoryLimit << 20, instructions: instructionLimit, seconds: timeLimit)
        try Self.script(path: file, arguments: arguments, profile: sandbox ? .sandbox(limits) : .full)
    }

    static func script(path: String, arguments: [String], profile: LuaProfile = .full) throws {
        try Failure.exitOnError {
            let source: [UInt8]
            do {
                source = try path == "-" ? SourceFile.readStandardInput() : SourceFile.read(path)
            } catch {
                throw Failure.message("cannot open \(path): \(error)")
            }
            let state = try Host.makeState(profile: profile)
            let chunkName = path == "-" ? "=stdin" : "@" + path
            try state.setGlobal("arg", .table(LuaTable(
                array: arguments.map { .text($0) },
                fields: [.integer(0): .text(path), .integer(-1): .text(CommandLine.arguments.first ?? "keyhost")]
            )))
            try state.execute(bytes: SourceFile.strippingShebang(source), chunkName: chunkName, arguments: arguments.map { .text($0) })
        }
    }
}
