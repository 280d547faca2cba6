// keyhost-ledger: the half of keyhost that links a server stack (Hummingbird, SwiftNIO) and a
// PostgreSQL driver (PostgresNIO), kept out of the `keyhost` binary so that every `keyhost run`
// starts without them. keyhost execs it for `keyhost token ledger serve` and spawns it as a child
// for a ledger on PostgreSQL (`keyhost-ledger pipe`, see LedgerProcess in KeyhostLedger).

import ArgumentParser
import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerPostgres
import KeyhostLedgerServer
import KeyhostTokens

@main
struct KeyhostLedgerMain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyhost-ledger",
        abstract: "The issuer ledger's HTTP service and PostgreSQL access, for keyhost (docs/ledger.md).",
        discussion: "Usually run by keyhost: 'keyhost token ledger serve' runs 'keyhost-ledger serve'; keyhost opens a postgres:// ledger through 'keyhost-ledger pipe'.",
        subcommands: [Serve.self, Pipe.self]
    )
}

/// Errors as keyhost prints them: `keyhost: MESSAGE` on standard error, exit status 1.
func exitOnError(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        fflush(stdout)
        fputs("keyhost: \(error)\n", stderr)
        throw ExitCode(1)
    }
}

struct Message: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `--issuer HEX`, repeatable: the issuers a ledger serves.
func parseIssuers(_ texts: [String]) throws -> [XOnlyPublicKey] {
    try texts.map { text in
        guard let bytes = try? Hex.decode(text), bytes.count == 32, let key = try? XOnlyPublicKey(bytes: bytes) else {
            throw Message("--issuer must be an x-only public key, 32 bytes in hex (64 digits), got \(text.prefix(80).debugDescription)")
        }
        return key
    }
}

/// `keyhost-ledger serve` (what `keyhost token ledger serve` runs; the same options).
struct Serve: ParsableCommand {
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
        try exitOnError {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port),
                  colon > listen.startIndex
            else { throw Message("--listen must be HOST:PORT (e.g. 127.0.0.1:8080), got \(listen.prefix(80).debugDescription)") }
            guard maxBodyKib >= 1 else { throw Message("--max-body-kib must be at least 1") }
            let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard !issuer.isEmpty else { throw Message("name the issuer(s) this ledger serves with --issuer HEX (x-only public key, 64 hex digits)") }
            let issuers = try parseIssuers(issuer)
            let location = try LedgerLocation(db)
            let store = try blocking { try await location.open() }
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
