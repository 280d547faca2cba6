import ArgumentParser
import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerServer
import KeyhostTokens

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

/// Opens `sqlite:FILE` or `postgres://…` as a ledger store.
func openStore(_ text: String) throws -> any LedgerStore {
    let location = try LedgerLocation(text)
    return try blocking { try await location.open() }
}

/// `keyhost token ledger serve`.
struct TokenLedgerServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the ledger's HTTP service: POST /v1/deposit, GET /v1/stats, GET /v1/health.",
        discussion: "Prints 'listening on http://HOST:PORT' once it accepts connections (PORT 0 picks a free port). Stops on SIGINT or SIGTERM."
    )
    @Option(help: ArgumentHelp("Where to listen, HOST:PORT (e.g. 127.0.0.1:8080).", valueName: "host:port")) var listen: String
    @Option(help: ArgumentHelp("The database: sqlite:FILE or postgres://USER@HOST:PORT/DB (password from PGPASSWORD).", valueName: "db")) var db: String
    @Option(help: ArgumentHelp("An issuer this ledger serves: x-only public key in hex. Repeat for several.", valueName: "hex")) var issuer: [String] = []
    @Option(help: ArgumentHelp("The largest request body in KiB.", valueName: "kib")) var maxBodyKib: Int = 4096

    func run() throws {
        try Failure.exitOnError {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port),
                  colon > listen.startIndex
            else { throw Failure.message("--listen must be HOST:PORT (e.g. 127.0.0.1:8080), got \(listen.prefix(80).debugDescription)") }
            guard maxBodyKib >= 1 else { throw Failure.message("--max-body-kib must be at least 1") }
            let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            let issuers = try parseIssuers(issuer)
            let store = try openStore(db)
            var server = LedgerServer(ledger: try TokenLedger(store: store, issuers: issuers))
            server.maxBodyBytes = maxBodyKib << 10
            let configured = server
            let name = store.displayName
            try blocking {
                defer { Task { await store.close() } }
                try await configured.run(host: host, port: port) { bound in
                    print("listening on http://\(host):\(bound) (ledger \(name), \(issuers.count) issuer\(issuers.count == 1 ? "" : "s"))")
                    fflush(stdout)
                }
            }
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
                let store = try openStore(db)
                stats = try blocking {
                    do {
                        let stats = try await store.stats()
                        await store.close()
                        return stats
                    } catch {
                        await store.close()
                        throw error
                    }
                }
            case (nil, let url?):
                stats = try LedgerClient(url).stats()
            default:
                throw Failure.message("give one of --db sqlite:FILE|postgres://… or --ledger http://HOST:PORT")
            }
            if json { try printJSON(LedgerJSON.stats(stats)); return }
            print("tokens deposited: \(stats.tokens)")
            print("double spends seen: \(stats.doubleSpends)")
            for unit in stats.totals.keys.sorted() {
                print("  \(unit): \(stats.totals[unit] ?? "0") in \(stats.tokensByUnit[unit] ?? 0) token\(stats.tokensByUnit[unit] == 1 ? "" : "s")")
            }
        }
    }
}
