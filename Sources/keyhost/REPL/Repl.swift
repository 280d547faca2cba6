import ArgumentParser
import KeyhostBindings
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

struct Repl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "Start the interactive Lua prompt.",
        discussion: """
            Expressions print their values; statements may span lines. Tab completes globals, \
            'table.' fields and 'obj:' methods. Ctrl-C stops running code, Ctrl-D exits. History is \
            kept in $XDG_STATE_HOME/keyhost/history (mode 0600); statements that start with a space, \
            mention a PIN, PUK, password, mnemonic, seed or private key, or hold something that looks \
            secret (BIP39 words, an extended private key, WIF, 32 bytes of hex, a PIN-like string of \
            digits) are never saved. When standard input is not a terminal, it runs as a script.
            """
            + "\n" + HelpExamples.text(
                "keyhost repl",
                "keyhost -l keyhost.psbt repl                       # psbt is a global at the prompt")
    )

    @Argument(help: ArgumentHelp("Values for the global table arg (arg[1], arg[2], …), as a script gets them.", valueName: "arg"))
    var arguments: [String] = []

    func run() throws {
        if isatty(STDIN_FILENO) != 0 {
            try Self.interactive(arguments: arguments)
        } else {
            try Run.script(path: "-", arguments: arguments)
        }
    }

    /// The prompt; `preamble` chunks (`keyhost -e CODE repl`) run first, their results printed.
    static func interactive(preamble: [String] = [], arguments: [String] = []) throws {
        try Failure.exitOnError {
            let state = try Host.makeState()
            // As lua5.4 -i: arg holds the arguments, arg[0] the program.
            try state.setGlobal("arg", .table(LuaTable(
                array: arguments.map { .text($0) }, fields: [.integer(0): .text(CommandLine.arguments.first ?? "keyhost")])))
            try prompt(state, preamble: preamble)
        }
    }

    /// The prompt in an existing state (after `keyhost -i run FILE`, the script's).
    static func prompt(_ state: LuaState, preamble: [String] = []) throws {
        state.enableInterrupts()
        let session = try ReplSession(state: state)
        for code in preamble {
            switch try session.evaluate(code, chunkName: "=(command line)") {
            case .incomplete(let message), .failed(let message): throw Failure.kind("lua_error", message)
            case .succeeded(let output): if let output { print(output) }
            }
        }
        let editor = LineEditor(historyPath: History.path(), completer: session.completions)
        print("keyhost \(KeyhostModules.version) (Lua 5.4) · globals \(ReplSession.preloaded.joined(separator: ", ")) · Ctrl-D exits, Ctrl-C interrupts")
        var pending = ""
        while true {
            switch editor.readLine(prompt: pending.isEmpty ? "> " : ">> ") {
            case .endOfInput:
                print()
                return
            case .interrupted:
                print()
                pending = ""
            case .line(let line):
                let source = pending.isEmpty ? line : pending + "\n" + line
                if source.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" }) { pending = ""; continue }
                do {
                    switch try state.interruptOnSIGINT({ try session.evaluate(source) }) {
                    case .incomplete:
                        pending = source
                        continue
                    case .succeeded(let output):
                        if let output { print(output) }
                    case .failed(let message):
                        Failure.writeError("keyhost: " + message + "\n")
                    }
                } catch {
                    Failure.report(error)
                }
                fflush(stdout)
                editor.record(source)
                pending = ""
            }
        }
    }
}
