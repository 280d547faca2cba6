import ArgumentParser
import KeyhostBindings

#if canImport(Glibc)
import Glibc
#endif

@main
struct Keyhost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyhost",
        abstract: "Script hardware-wallet cards, HD keys and signatures in Lua 5.4.",
        discussion: """
            With no command, keyhost starts the REPL when standard input is a terminal \
            and otherwise runs standard input as a script.
            """,
        version: KeyhostModules.version,
        subcommands: [Run.self, Eval.self, Repl.self, CardCommand.self, Discover.self, TokenCommand.self, EthCommand.self]
    )

    @Option(name: .customShort("e"), help: ArgumentHelp("Run CODE and print what it returns (like 'keyhost eval').", valueName: "code"))
    var code: String?

    /// `keyhost run FILE [ARGS…]` is how scripts start, so it skips the argument parser, whose
    /// reflection is about half of keyhost's start-up. The parser reads this shape the same way:
    /// everything after FILE goes to the script.
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count >= 3, arguments[1] == "run", arguments[2] == "-" || !arguments[2].hasPrefix("-") {
            do {
                try Run.script(path: arguments[2], arguments: Array(arguments[3...]))
                Glibc.exit(0)
            } catch let error as ExitCode {
                Glibc.exit(error.rawValue)
            } catch {
                Failure.report(error)
                Glibc.exit(1)
            }
        }
        let rest = Discover.normalize(Array(arguments.dropFirst()))
        guard rest.contains("--json") else { main(rest); return }
        // With --json, command-line mistakes are JSON on standard error too, like every other error.
        Failure.json = true
        do {
            var command = try parseAsRoot(rest)
            try command.run()
            Glibc.exit(0)
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }  // --help, --version
            Failure.writeError((code.rawValue == 64 ? ErrorJSON.usage(message(for: error)) : ErrorJSON.document(for: error)) + "\n")
            Glibc.exit(code.rawValue)
        }
    }

    func run() throws {
        if let code {
            try Eval.evaluate(code)
        } else if isatty(STDIN_FILENO) != 0 {
            try Repl.interactive()
        } else {
            try Run.script(path: "-", arguments: [])
        }
    }
}
