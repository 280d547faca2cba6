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

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Arguments passed to the script.", valueName: "args"))
    var arguments: [String] = []

    func run() throws {
        try Self.script(path: file, arguments: arguments)
    }

    static func script(path: String, arguments: [String]) throws {
        try Failure.exitOnError {
            let source: [UInt8]
            do {
                source = try path == "-" ? SourceFile.readStandardInput() : SourceFile.read(path)
            } catch {
                throw Failure.message("cannot open \(path): \(error)")
            }
            let state = try Host.makeState()
            let chunkName = path == "-" ? "=stdin" : "@" + path
            try state.setGlobal("arg", .table(LuaTable(
                array: arguments.map { .text($0) },
                fields: [.integer(0): .text(path), .integer(-1): .text(CommandLine.arguments.first ?? "keyhost")]
            )))
            try state.execute(bytes: SourceFile.strippingShebang(source), chunkName: chunkName, arguments: arguments.map { .text($0) })
        }
    }
}
