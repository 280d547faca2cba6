import ArgumentParser
import KeyhostHTTP
import KeyhostServices
import CKeyhostProcess
import KeyhostLedger
import KeyhostLedgerCommand
import KeyhostRecord
import KeyhostWorkerProcess

#if canImport(Glibc)
import Glibc
#endif

/// `keyhost token ledger …`: the issuer's ledger of deposited tokens.
struct TokenLedgerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "The issuer's ledger: records deposited tokens once and catches double spends (docs/ledger.md).",
        subcommands: [TokenLedgerServe.self, TokenLedgerStats.self]
    )
}

/// `keyhost token ledger serve`: runs `keyhost-ledger serve` in this process's place (execve: its
/// signals, output and exit status are the server's). keyhost itself links no HTTP server.
struct TokenLedgerServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: LedgerServeOptions.abstract,
        discussion: LedgerServeOptions.discussion + " The service is the program keyhost-ledger, found next to keyhost or on PATH (scripts/install installs both)."
    )
    @OptionGroup var options: LedgerServeOptions

    func run() throws {
        try Failure.exitOnError {
            try CommandLinePassword.refuse(options.db, option: "--db")
            let program = try LedgerProgram.path()
            let password: String? = getenv("PGPASSWORD").map { String(cString: $0) }
            let arguments = [program, "serve"] + options.arguments(db: options.db)
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = LedgerProgram.environment(password: password, worker: WorkerRunner.currentExecutable).map { strdup($0) } + [nil]
            fflush(stdout)
            // The server gets 0-2 only, like every child keyhost starts; should the exec fail, keyhost keeps its own.
            guard khp_cloexec_other_descriptors() == 0 else {
                throw Failure.kind("io", "cannot prepare the descriptors of the ledger service \(program): \(String(cString: strerror(errno)))")
            }
            execve(program, argv, envp)
            throw Failure.kind("io", "cannot run the ledger service \(program): \(String(cString: strerror(errno)))")
        }
    }
}

/// `keyhost token ledger stats`.
struct TokenLedgerStats: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Tokens deposited, total value by unit, double spends seen.")
    @Option(help: ArgumentHelp("Read the database directly: sqlite:FILE or postgres://USER@HOST:PORT/DB.", valueName: "db")) var db: String?
    @Option(help: ArgumentHelp("Ask a running ledger service: http://HOST:PORT.", valueName: "url")) var ledger: String?
    @OptionGroup var proxyOptions: ProxyOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try Failure.exitOnError {
            let stats: LedgerStats
            switch (db, ledger) {
            case (let db?, nil):
                try CommandLinePassword.refuse(db, option: "--db")
                let connection = try LedgerConnections.open(db, issuers: [], worker: WorkerRunner.currentExecutable)
                defer { connection.close() }
                stats = try connection.stats()
            case (nil, let url?):
                guard LedgerConnections.isService(url) else { throw Failure.kind("invalid_argument", "--ledger takes the service's http://HOST:PORT; a database goes with --db") }
                let connection = try LedgerConnections.open(url, issuers: [], worker: WorkerRunner.currentExecutable,
                                                            proxies: try proxyOptions.settings())
                defer { connection.close() }
                stats = try connection.stats()
            default:
                throw Failure.kind("invalid_argument", "give one of --db sqlite:FILE|postgres://… or --ledger http://HOST:PORT")
            }
            if json { print(Record(ledgerStats: stats).json()); return }
            print("tokens deposited: \(stats.tokens)")
            print("double spends seen: \(stats.doubleSpends)")
            for unit in stats.totals.keys.sorted() {
                print("  \(unit): \(stats.totals[unit] ?? "0") in \(stats.tokensByUnit[unit] ?? 0) token\(stats.tokensByUnit[unit] == 1 ? "" : "s")")
            }
        }
    }
}
