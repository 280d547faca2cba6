import Foundation
import KeyhostLedger
import KeyhostTestSupport
import Testing

/// The SQLite ledger's file as another SQLite reader (Python's sqlite3 module) sees it.
@Suite struct SQLiteLedgerFileTests {
    @Test func anotherSQLiteReaderFindsTheLedgerIntact() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let ledger = try TokenLedger(store: try SQLiteLedgerStore(path: path), issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run)
        let token = try Fixtures.token(value: 250)
        _ = try await ledger.deposit([try Fixtures.deposit(token, via: 2)])
        _ = try await ledger.deposit([try Fixtures.deposit(token, via: 3)])  // a double spend
        await ledger.store.close()

        let report = try JSONSerialization.jsonObject(with: PythonOracle.run("sqlite_file_oracle.py", [path])) as? [String: Any]
        #expect(report?["integrity_check"] as? [String] == ["ok"])
        #expect(report?["foreign_key_check"] as? Int == 0)
        #expect(report?["journal_mode"] as? String == "wal")
        #expect(report?["tables"] as? [String: Int] == ["deposits": 1, "double_spends": 1])
    }
}
