import ArgumentParser
import KeyhostCrypto
import KeyhostLedger
import KeyhostRecord

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

/// `--issuer HEX`, repeatable: the issuers a ledger serves.
func parseIssuers(_ texts: [String]) throws -> [XOnlyPublicKey] {
    guard !texts.isEmpty else { throw Failure.message("name the issuer(s) this ledger serves with --issuer HEX (x-only public key, 64 hex digits)") }
    return try texts.map { text in
        guard let bytes = try? Hex.decode(text), bytes.count == 32, let key = try? XOnlyPublicKey(bytes: bytes) else {
            throw Failure.message("--issuer must be an x-only public key, 32 bytes in hex (64 digits), got \(text.prefix(80).debugDescription)")
        }
        return key
    }
}

/// `keyhost token ledger serve`: runs `keyhost-ledger serve` in this process's place (execve: its
/// signals, output and exit status are the server's). keyhost itself links no HTTP server.
struct TokenLedgerServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the ledger's HTTP service: POST /v1/deposit, GET /v1/stats, GET /v1/health.",
        discussion: """
            Prints 'listening on http://HOST:PORT' once it accepts connections (PORT 0 picks a free port). Stops on SIGINT or SIGTERM. \
            The service is the program keyhost-ledger, found next to keyhost or on PATH (scripts/install installs both).
            """
    )
    @Option(help: ArgumentHelp("Where to listen, HOST:PORT (e.g. 127.0.0.1:8080).", valueName: "host:port")) var listen: String
    @Option(help: ArgumentHelp("The database: sqlite:FILE or postgres://USER@HOST:PORT/DB (password from PGPASSWORD).", valueName: "db")) var db: String
    @Option(help: ArgumentHelp("An issuer this ledger serves: x-only public key in hex. Repeat for several.", valueName: "hex")) var issuer: [String] = []
    @Option(help: ArgumentHelp("The largest request body in KiB.", valueName: "kib")) var maxBodyKib: Int = 4096

    func run() throws {
        try Failure.exitOnError {
            let program = try LedgerProgram.path()
            // A password written in the URL goes to the server in PGPASSWORD, not on its command line.
            var database = db
            var password: String? = getenv("PGPASSWORD").map { String(cString: $0) }
            if case .postgres(let location)? = try? LedgerLocation(db), location.password != nil {
                database = location.display
                password = location.password
            }
            let arguments = [program, "serve", "--listen", listen, "--db", database, "--max-body-kib", String(maxBodyKib)]
                + issuer.flatMap { ["--issuer", $0] }
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = LedgerProgram.environment(password: password).map { strdup($0) } + [nil]
            fflush(stdout)
            execve(program, argv, envp)
            throw Failure.message("cannot run the ledger service \(program): \(String(cString: strerror(errno)))")
        }
    }
}

/// `keyhost token ledger stats`.
struct TokenLedgerStats: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Tokens deposited, total value by unit, double spends seen.")
    @Option(help: ArgumentHelp("Read the database directly: sqlite:FILE or postgres://USER@HOST:PORT/DB.", valueName: "db")) var db: String?
    @Option(help: ArgumentHelp("Ask a running ledger service: http://HOST:PORT.", valueName: "url")) var ledger: String?
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try Failure.exitOnError {
            let stats: LedgerStats
            switch (db, ledger) {
            case (let db?, nil):
                let connection = try TokenLedgers.open(db, issuers: [])
                defer { connection.close() }
                stats = try connection.stats()
            case (nil, let url?):
                stats = try LedgerClient(url).stats()
            default:
                throw Failure.message("give one of --db sqlite:FILE|postgres://… or --ledger http://HOST:PORT")
            }
            if json { print(LedgerJSON.stats(stats).json()); return }
            print("tokens deposited: \(stats.tokens)")
            print("double spends seen: \(stats.doubleSpends)")
            for unit in stats.totals.keys.sorted() {
                print("  \(unit): \(stats.totals[unit] ?? "0") in \(stats.tokensByUnit[unit] ?? 0) token\(stats.tokensByUnit[unit] == 1 ? "" : "s")")
            }
        }
    }
}
