import Foundation
import KeyhostCrypto
import KeyhostLedger

extension PostgresHarness {
    /// A psql session named `name` that inserts `tokenID` into `db`'s deposits and keeps its
    /// transaction open (the row locked) until its backend is terminated.
    func holdRow(_ tokenID: [UInt8], in db: PostgresLocation, name: String) throws -> Child {
        let zeros = String(repeating: "00", count: 32)
        var environment = LedgerProgram.environment(password: nil, worker: Fixtures.worker)
        environment.append("PGAPPNAME=\(name)")
        let holder = try Child(binaries + "/psql", [
            "-h", "127.0.0.1", "-p", String(port), "-U", "keyhost", "-d", db.database, "-c", """
            BEGIN; INSERT INTO deposits (token_id, chain_hash, chain, issuer, value, unit, deposit_time)
            VALUES ('\\x\(Hex.encode(tokenID))', '\\x\(zeros)', '\\x00', '\\x\(zeros)', 1, 'EUR-cent', 0); SELECT pg_sleep(300);
            """,
        ], environment: environment)
        let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(name)' AND wait_event = 'PgSleep'"
        guard try waitFor(db, sleeping, toBe: "1") else { throw HarnessError("the row holder did not start: \(holder.output)") }
        return holder
    }

    /// Polls `sql` in `db` until it answers `expected`; false only when it never does.
    func waitFor(_ db: PostgresLocation, _ sql: String, toBe expected: String) throws -> Bool {
        try eventually { try query(db, sql) == expected }
    }

    /// The same from an async test, sleeping between polls (see `eventually`).
    func waitFor(_ db: PostgresLocation, _ sql: String, toBe expected: String) async throws -> Bool {
        try await eventually { try query(db, sql) == expected }
    }
}
