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
        subcommands: [Run.self, Eval.self, Repl.self]
    )

    @Option(name: .customShort("e"), help: ArgumentHelp("Run CODE and print what it returns (like 'keyhost eval').", valueName: "code"))
    var code: String?

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
