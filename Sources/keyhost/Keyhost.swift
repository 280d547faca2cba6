import ArgumentParser
import CKeyhostProcess

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
        version: VersionText.text,
        subcommands: [Run.self, Eval.self, Repl.self, CardCommand.self, KeyCommand.self, Discover.self, TokenCommand.self, EthCommand.self, PSBTCommand.self, DescriptorCommand.self]
    )

    /// The parser's own messages (an unknown option, a missing value) start as keyhost's do, so every error reads
    /// "keyhost: …" whoever found it.
    static var _errorPrefix: String { "keyhost: " }

    @Option(name: .customShort("e"), help: ArgumentHelp(
        "Run CODE and print what it returns (like 'keyhost eval'). Repeatable; before 'run FILE' or 'repl' it runs first, in the same state.",
        valueName: "code"))
    var code: [String] = []

    /// `keyhost run FILE [ARGS…]` is how scripts start, so it skips the argument parser, whose
    /// reflection is about half of keyhost's start-up. The parser reads this shape the same way:
    /// everything after FILE goes to the script.
    static func main() {
        khp_quiet_crash_output()
        var arguments = CommandLine.arguments
        // Options before `run FILE`, before `repl`, or alone, as the lua interpreter takes them: `-e CODE` and
        // `-l [NAME=]MODULE` (repeatable, in order), `-i` (the prompt afterwards), `-v` (the version).
        var chunks: [String] = []
        var interactive = false, version = false
        func value(_ flag: String) -> String {
            if arguments[1] == flag {
                guard arguments.count >= 3 else {
                    usageExit(flag == "-e" ? "-e needs Lua code after it: keyhost -e 'print(1)'" : "-l needs a module after it: keyhost -l keyhost.psbt")
                }
                defer { arguments.removeSubrange(1...2) }
                return arguments[2]
            }
            defer { arguments.remove(at: 1) }
            return String(arguments[1].dropFirst(2))
        }
        while arguments.count >= 2 {
            let option = arguments[1]
            if option == "-e" || (option.hasPrefix("-e") && option.count > 2) {
                chunks.append(value("-e"))
            } else if option == "-l" || (option.hasPrefix("-l") && option.count > 2) {
                chunks.append(libraryChunk(value("-l")))
            } else if option == "-i" {
                interactive = true
                arguments.remove(at: 1)
            } else if option == "-v" {
                version = true
                arguments.remove(at: 1)
            } else {
                break
            }
        }
        if version {
            print(VersionText.text)
            fflush(stdout)
            if chunks.isEmpty && !interactive && arguments.count < 2 { Glibc.exit(0) }
        }
        if !chunks.isEmpty || interactive {
            let rest = Array(arguments.dropFirst())
            if rest.isEmpty {
                exitAfter { interactive ? try Repl.interactive(preamble: chunks) : try Eval.evaluate(chunks) }
            } else if rest[0] == "run", rest.count >= 2, rest[1] == "-" || !rest[1].hasPrefix("-") {
                exitAfter { try Run.script(path: rest[1], arguments: Array(rest[2...]), preamble: chunks, interactive: interactive) }
            } else if rest[0] == "repl", !rest.dropFirst().contains(where: { $0.hasPrefix("-") }) {
                exitAfter { try Repl.interactive(preamble: chunks, arguments: Array(rest.dropFirst())) }
            } else {
                usageExit("-e, -l and -i go alone, before 'run FILE [ARGS…]' or before 'repl'; here they are followed by '\(rest[0])'")
            }
        }
        if arguments.count >= 3, arguments[1] == "run", arguments[2] == "-" || !arguments[2].hasPrefix("-") {
            exitAfter { try Run.script(path: arguments[2], arguments: Array(arguments[3...])) }
        }
        // The token worker a wallet or ledger starts (internal, exact shapes only) skips the parser too:
        // its start is on the path of a wallet's first run.
        if arguments.count <= 4, arguments.count >= 3, arguments[1] == "token", arguments[2] == "_worker",
           arguments.count == 3 || arguments[3] == "--fork" || arguments[3] == "--serve" {
            Glibc.exit(TokenWorkerCommand.serve(fork: arguments.count == 4 && arguments[3] == "--fork",
                                                serving: arguments.count == 4 && arguments[3] == "--serve"))
        }
        // `keyhost token run ID…` is what scripts call in loops: it is parsed as a leaf command, without
        // building the whole command tree (most of a short command's start). Anything the leaf parse does
        // not take (help, a mistake, --json's JSON errors) goes the usual way below, which parses it again.
        if arguments.count >= 4, arguments[1] == "token", arguments[2] == "run" {
            // Its plainest shape (ids and --wallet) is read by hand, without the parser at all.
            if let plain = TokenRun.Plain(Array(arguments.dropFirst(3))) { exitAfter { try plain.run() } }
            if !arguments.contains("--json"),
               !arguments.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "--version" || $0.hasPrefix("--generate-completion") }),
               var command = try? TokenRun.parse(Array(arguments.dropFirst(3))) {
                exitAfter { try command.run() }
            }
        }
        if arguments.count >= 2 { scriptAsCommand(arguments[1], then: Array(arguments.dropFirst(2))) }
        let rest = CardFlagArguments.normalize(Discover.normalize(Array(arguments.dropFirst())))
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

    /// `keyhost job.lua` (lua5.4's habit): not a command, but the fix is plain, so say it rather than "unexpected argument".
    static func scriptAsCommand(_ first: String, then rest: [String]) {
        guard !first.hasPrefix("-"), first != "help", !configuration.subcommands.contains(where: { $0._commandName == first }) else { return }
        var status = stat()
        let isFile = stat(first, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        guard first.hasSuffix(".lua") || isFile else { return }
        // The script's own arguments are not echoed: one could be a secret typed by mistake.
        usageExit("'\(first)' is not a command; to run a Lua script: keyhost run \(first)\(rest.isEmpty ? "" : " [ARGS…]")")
    }

    /// The chunk `-l [NAME=]MODULE` runs: the module into the global NAME, by default the last part of
    /// its dotted name (`-l keyhost.psbt` sets `psbt`), as lua5.4 -l sets one global per module.
    static func libraryChunk(_ given: String) -> String {
        let parts = given.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let module = parts.count == 2 ? parts[1] : given
        let name = parts.count == 2 ? parts[0] : String(module.split(separator: ".").last ?? Substring(module))
        guard LuaName.isName(name), LuaName.isModule(module) else {
            usageExit("-l takes a module name, or NAME=MODULE, such as keyhost.psbt or p=keyhost.psbt; got '\(given)'")
        }
        return "\(name) = require \"\(module)\""
    }

    /// Runs `body` and exits with its status (1 after a reported error).
    static func exitAfter(_ body: () throws -> Void) -> Never {
        do {
            try body()
            Glibc.exit(0)
        } catch let error as ExitCode {
            Glibc.exit(error.rawValue)
        } catch {
            Failure.report(error)
            Glibc.exit(1)
        }
    }

    /// A command-line mistake found before the argument parser runs: exit 64, like the parser's own.
    static func usageExit(_ message: String) -> Never {
        Failure.writeError(Failure.json ? ErrorJSON.usage(message) + "\n" : "keyhost: \(message)\n")
        Glibc.exit(64)
    }

    func run() throws {
        if !code.isEmpty {
            try Eval.evaluate(code)
        } else if isatty(STDIN_FILENO) != 0 {
            try Repl.interactive()
        } else {
            try Run.script(path: "-", arguments: [])
        }
    }
}
