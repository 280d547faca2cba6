// keyhost-ledger: the half of keyhost that links a server stack (Hummingbird, SwiftNIO) and a
// PostgreSQL driver (PostgresNIO), kept out of the `keyhost` binary so that every `keyhost run`
// starts without them. keyhost execs it for `keyhost token ledger serve` and spawns it as a child
// for a ledger on PostgreSQL (`keyhost-ledger pipe`, see LedgerProcess in KeyhostLedger).

import ArgumentParser
import CKeyhostProcess
import Foundation
import KeyhostLedger
import KeyhostLedgerCommand
import KeyhostLedgerPostgres
import KeyhostLedgerServer
import KeyhostTokens
import KeyhostWorkerProcess

@main
struct KeyhostLedgerMain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyhost-ledger",
        abstract: "The issuer ledger's HTTP service and PostgreSQL access, for keyhost (docs/ledger.md).",
        discussion: "Usually run by keyhost: 'keyhost token ledger serve' runs 'keyhost-ledger serve'; keyhost opens a postgres:// ledger through 'keyhost-ledger pipe'.",
        subcommands: [Serve.self, Pipe.self]
    )

    static func main() {
        khp_quiet_crash_output()
        main(nil)
    }
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

/// `keyhost-ledger serve` (what `keyhost token ledger serve` runs; the same options).
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: LedgerServeOptions.abstract, discussion: LedgerServeOptions.discussion)
    @OptionGroup var options: LedgerServeOptions

    func run() throws {
        try exitOnError {
            let (listen, maxBodyKib) = (options.listen, options.maxBodyKib)
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port),
                  colon > listen.startIndex
            else { throw Message("--listen must be HOST:PORT (e.g. 127.0.0.1:8080), got \(listen.prefix(80).debugDescription)") }
            guard maxBodyKib >= 1 else { throw Message("--max-body-kib must be at least 1") }
            let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            let issuers = try LedgerIssuers.parse(options.issuer)
            try CommandLinePassword.refuse(options.db, option: "--db")
            let location = try LedgerLocation(options.db)
            // Each deposit re-runs its tokens' programs in keyhost's worker: find it before listening.
            let programs = WorkerPool(executable: try WorkerProgram.path())
            let limits = try ConnectionLimits.resolve(
                total: options.maxConnections, perClient: options.maxConnectionsPerClient, requestTimeoutSeconds: options.requestTimeout)
            let verification = try VerificationLimits.resolve(
                linksPerRequest: options.maxLinksPerRequest, linksPerSecondPerClient: options.linksPerSecondPerClient)
            let store = try blocking { try await location.open() }
            var server = LedgerServer(ledger: try TokenLedger(store: store, issuers: issuers, linkPrograms: programs.runLinks))
            server.maxBodyBytes = maxBodyKib << 10
            server.connectionLimits = limits
            server.verifiers = { programs.health() }
            server.verificationLimits = verification
            if let postgres = store as? PostgresLedgerStore {
                // The store's own limit ends a deposit first, with a definite answer (nothing
                // recorded); the service's is only a backstop.
                server.depositTimeout = max(server.depositTimeout, postgres.callLimit + .seconds(5))
            }
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
