import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Testing

/// Many keyhost processes, two ledger servers, one PostgreSQL: what the database guarantees.
@Suite(.serialized) struct ProcessTests {
    static let issuerHex = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)

    /// 16 processes deposit one token through two servers, in four different chains: exactly one
    /// deposit is accepted, those with the winner's chain are told already_deposited, the others
    /// double_spend with a proof naming the key that signed twice.
    @Test func sixteenProcessesTwoServersOneToken() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let url = "postgres://keyhost@127.0.0.1:\(pg.port)/\(db.database)"
        let (serverA, addressA) = try Child.ledgerServer(db: url, issuers: [Self.issuerHex])
        let (serverB, addressB) = try Child.ledgerServer(db: url, issuers: [Self.issuerHex])
        defer { serverA.kill(SIGTERM); serverB.kill(SIGTERM); serverA.wait(); serverB.wait() }

        let token = try Fixtures.token(value: 500)
        let variants = try (2...5).map { try Fixtures.deposit(token, via: $0) }
        let files = try variants.map { try temporaryFile($0.armored + "\n") }
        let proofs = FileManager.default.temporaryDirectory.appendingPathComponent("proofs-\(UUID().uuidString)").path
        let clients = try (0..<16).map { i in
            try Child(Child.keyhost, ["token", "deposit", files[i % 4], "--ledger", i % 2 == 0 ? addressA : addressB, "--proofs", proofs])
        }
        let statuses = clients.map { $0.wait() }
        let outputs = clients.map(\.output)
        let id = Hex.encode(token.token.id)

        let accepted = outputs.indices.filter { outputs[$0] == "\(id)  accepted\n" }
        try #require(accepted.count == 1, "outputs: \(outputs)")
        let winner = accepted[0] % 4
        for i in 0..<16 where i != accepted[0] {
            if i % 4 == winner {
                #expect(outputs[i] == "\(id)  already deposited\n" && statuses[i] == 0, "client \(i): \(outputs[i])")
            } else {
                #expect(outputs[i].hasPrefix("\(id)  double spend  signed twice by \(Hex.encode(Fixtures.keys[1].publicKey.compressed))  proof: \(proofs)/"),
                        "client \(i): \(outputs[i])")
                #expect(statuses[i] == 1)
            }
        }
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "1")
        #expect(try pg.query(db, "SELECT count(*) FROM double_spends") == "3")
        // The proofs written by the clients check out with the issuer's key alone.
        let written = try FileManager.default.contentsOfDirectory(atPath: proofs)
        #expect(written.count == 3)
        for name in written {
            let check = try Child(Child.keyhost, ["token", "verify-proof", "\(proofs)/\(name)", "--json"])
            #expect(check.wait() == 0)
            #expect(check.output.contains(Hex.encode(Fixtures.keys[1].publicKey.compressed)))
        }
    }

    /// A server killed with SIGKILL while its deposit transaction is open records nothing of the
    /// batch; the retry through a new server gets the right answer for every token.
    @Test func killedServerLeavesNoHalfDeposit() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let url = "postgres://keyhost@127.0.0.1:\(pg.port)/\(db.database)"
        let chains = try (0..<1000).map { _ in try Fixtures.deposit(try Fixtures.token(value: 3)) }
        let file = try temporaryFile(chains.map(\.armored).joined(separator: "\n") + "\n")

        let (server, address) = try Child.ledgerServer(db: url, issuers: [Self.issuerHex])
        let client = try Child(Child.keyhost, ["token", "deposit", file, "--ledger", address])
        // Wait until the server's transaction has written rows but not committed, then kill it.
        let caught = try eventually {
            try pg.query(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()") != "0"
        }
        server.kill(SIGKILL)
        server.wait()
        #expect(client.wait() == 1, "the client must see the failure: \(client.output)")
        try #require(caught, "never saw the deposit transaction open")
        // PostgreSQL ends the dead server's session and rolls its transaction back; only then is
        // the count final.
        let sessions = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        try #require(try pg.waitFor(db, sessions, toBe: "0"), "the dead server's session never ended")
        let recorded = try pg.query(db, "SELECT count(*) FROM deposits")
        #expect(recorded == "0" || recorded == "1000", "a half-recorded batch: \(recorded) rows")

        let (again, againAddress) = try Child.ledgerServer(db: url, issuers: [Self.issuerHex])
        defer { again.kill(SIGTERM); again.wait() }
        let retry = try Child(Child.keyhost, ["token", "deposit", file, "--ledger", againAddress])
        #expect(retry.wait() == 0, "\(retry.output.prefix(500))")
        let lines = retry.output.split(separator: "\n")
        let expected = recorded == "0" ? "accepted" : "already deposited"
        #expect(lines.count == 1000 && lines.allSatisfy { $0.hasSuffix("  \(expected)") })
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "1000")
    }
}
