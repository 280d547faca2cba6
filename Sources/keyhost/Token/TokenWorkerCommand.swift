import ArgumentParser
import KeyhostPlayer
import KeyhostServices

/// `keyhost token _worker`: the process a wallet starts for each token run (not for people).
struct TokenWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_worker",
        abstract: "Run one token program for a wallet (internal: reads a request on standard input).",
        shouldDisplay: false
    )

    @Flag(help: "Serve requests until standard input ends (a warm worker).")
    var serve = false

    @Flag(help: "Fork a fresh child for each request until standard input ends (a fork server).")
    var fork = false

    func run() throws {
        let status = Self.serve(fork: fork, serving: serve)
        if status != 0 { throw ExitCode(status) }
    }

    /// The worker's exit status (`Keyhost.main` calls this directly for the exact internal shapes).
    static func serve(fork: Bool, serving: Bool) -> Int32 {
        fork ? TokenWorker.serveForking(player: PlayerSupport.player()) : TokenWorker.serve(player: PlayerSupport.player(), serving: serving)
    }
}

/// The player as keyhost configures it: the stdlib's pure modules offered to programs.
enum PlayerSupport {
    static func player() -> TokenPlayer {
        var modules: [String: [UInt8]] = [:]
        if let stdlib = Stdlib.directory {
            for name in ["hex", "json"] {
                modules[name] = try? SourceFile.read(stdlib + "/keyhost/\(name).lua")
            }
        }
        return TokenPlayer(helperModules: modules)
    }
}
