import ArgumentParser
import LuaRuntime

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a Lua script.",
        discussion: """
            The script sees its arguments as '...' and in the global table 'arg' (arg[0] is the \
            script), as with the standalone lua interpreter. Exit status: 0 on success, 1 on an \
            uncaught error (message and traceback on standard error), n after os.exit(n).
            """
            + "\n" + HelpExamples.text(
                "keyhost run hello.lua world                       # the script sees 'world' as ... and arg[1]",
                "echo 'print(1 + 1)' | keyhost run -")
    )

    @Argument(help: ArgumentHelp("The script, or - for standard input.", valueName: "file"))
    var file: String

    @Flag(help: "Run untrusted code: no io, os, debug, package or binary chunks, with the limits below.")
    var sandbox = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Sandbox memory cap in MiB, 1 to 1048576 (default: 64). Needs --sandbox.", valueName: "mib"))
    var memoryLimit: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Sandbox instruction budget, at least 1 (default: 100000000). Needs --sandbox.", valueName: "count"))
    var instructionLimit: UInt64?

    @Option(parsing: .unconditional, help: ArgumentHelp("Sandbox wall-clock limit in seconds, more than 0 (default: 5). Needs --sandbox.", valueName: "seconds"))
    var timeLimit: Double?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Arguments passed to the script.", valueName: "args"))
    var arguments: [String] = []

    func validate() throws {
        // Limits are enforced only in the sandbox; accepting them without it would promise a bound that is not there.
        if !sandbox {
            let given = [("--memory-limit", memoryLimit != nil), ("--instruction-limit", instructionLimit != nil), ("--time-limit", timeLimit != nil)]
            if let (name, _) = given.first(where: { $0.1 }) {
                throw ValidationError("\(name) applies only to sandboxed code: add --sandbox, or drop \(name)")
            }
        }
        if let memoryLimit, !(1...(1 << 20)).contains(memoryLimit) {
            throw ValidationError("--memory-limit must be between 1 and 1048576 MiB, got \(memoryLimit)")
        }
        if instructionLimit == 0 {
            throw ValidationError("--instruction-limit must be at least 1 (there is no unlimited budget in the sandbox), got 0")
        }
        if let timeLimit, !(timeLimit > 0 && timeLimit.isFinite) {
            throw ValidationError("--time-limit must be a positive number of seconds, got \(timeLimit)")
        }
    }

    func run() throws {
        let defaults = SandboxLimits()
        let limits = SandboxLimits(
            memoryBytes: (memoryLimit ?? defaults.memoryBytes >> 20) << 20,
            instructions: instructionLimit ?? defaults.instructions,
            seconds: timeLimit ?? defaults.seconds
        )
        try Self.script(path: file, arguments: arguments, profile: sandbox ? .sandbox(limits) : .full)
    }

    /// Runs the script at `path`; `preamble` chunks (`keyhost -e CODE run FILE`) run first in the same state.
    /// With `interactive` (`keyhost -i run FILE`) the prompt follows in the script's state.
    static func script(path: String, arguments: [String], profile: LuaProfile = .full, preamble: [String] = [],
                       interactive: Bool = false) throws {
        try Failure.exitOnError {
            let source: [UInt8]
            do {
                source = try path == "-" ? SourceFile.readStandardInput() : SourceFile.read(path)
            } catch {
                throw Failure.kind("io", "cannot read \(error)")
            }
            let state = try Host.makeState(profile: profile)
            let chunkName = path == "-" ? "=stdin" : "@" + path
            try state.setGlobal("arg", .table(LuaTable(
                array: arguments.map { .text($0) },
                fields: [.integer(0): .text(path), .integer(-1): .text(CommandLine.arguments.first ?? "keyhost")]
            )))
            // Ctrl-C raises "interrupted" in the script (its <close> variables and pcall handlers run), in Lua code
            // and in long keyhost calls alike; a second one before that is noticed ends the process (130).
            // No count hook is set for this: the signal handler sets one only when Ctrl-C comes, as lua.c does.
            try state.interruptOnSIGINT {
                for (n, chunk) in preamble.enumerated() {
                    try state.run(bytes: Array(chunk.utf8), chunkName: preamble.count == 1 ? "=(command line)" : "=(command line \(n + 1))",
                                  arguments: [])
                }
                try state.run(bytes: SourceFile.strippingShebang(source), chunkName: chunkName, arguments: arguments.map { .text($0) })
            }
            if interactive { try Repl.prompt(state) }
        }
    }
}
