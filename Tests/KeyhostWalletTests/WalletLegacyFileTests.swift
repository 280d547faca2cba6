import Foundation
import KeyhostCrypto
import KeyhostSQLite
import KeyhostTestSupport
import KeyhostTokens
import Testing
@testable import KeyhostWallet

/// Wallet files written before keyhost had its own SQLite wrapper, and files it writes now as
/// another SQLite reader sees them.
///
/// Fixtures/grdb-payer.khw and grdb-payee.khw were made by keyhost at commit 3edb12b (the last
/// one storing wallets through GRDB) with its CLI: `token wallet init`, three tokens of
/// stdlib/keyhost/cash.lua issued to the payer (values 1, 2, 3 pt) and imported, `token trust`
/// of their issuer, a `token request` by the payer (2 keys), then the payee's request for 2 pt,
/// paid by the payer (the 2 pt token SPENT, one `outgoing` row) and received by the payee. Their
/// holder keys are throwaway test keys.
@Suite struct WalletLegacyFileTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let issuer = "25d1dff95105f5253c4022f628a996ad3a0d95fbf21d468a1b33f8c160d8f517"
    static let (one, two, three) = (
        "c8c8219ec2651e1cff0f6800c7754e16926118f8ef3f11232ac7a611a38cb047",
        "733710725cdb94a1d0b046b3eba2ad1fb86cac158393db25518e8b174503d03b",
        "b9df323f63dd9e89ba63543a0d63f4b17ef66fcaaa7b8c587f2674376ab7784f"
    )
    static let payeeRequest = "2eaddc74f62fc40e6694056a5e23bf14963cac5c2fe4ffb84ab7df944d7276fa"

    /// A private copy of a fixture (opening writes the -wal and -shm files beside it).
    static func copy(_ name: String, into directory: String) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(name).path, toPath: path)
        guard chmod(path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return path
    }

    /// Every table, index and trigger with its SQL, as SQLite keeps them.
    static func schema(_ store: TokenStore) throws -> [String] {
        try store.database.access { db in
            try db.fetchAll("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").map { row in
                "\(try row["type"] as String) \(try row["name"] as String): \(try row["sql"] as String? ?? "-")"
            }
        }
    }

    @Test func aWalletGRDBWroteOpensWithEverythingInIt() throws {
        try withTemporaryDirectory { directory in
            let path = try Self.copy("grdb-payer.khw", into: directory)
            let wallet = try TokenWallet(path: path)
            let store = wallet.store
            #expect(try store.schemaVersion() == 2)
            #expect(try wallet.holder().publicKey.compressed == Hex.decode("03be4e9541a28b1bbd4b6826c07bbc75252ad53f199f3ca5fdace19018f24485bd"))
            // The holder's secret reads back and matches its public key.
            #expect(try wallet.softwareSigner() != nil)
            #expect(try store.trustedIssuers().map(Hex.encode) == [Self.issuer])

            let tokens = try store.tokens()
            #expect(Set(tokens.map { Hex.encode($0.id) }) == [Self.one, Self.two, Self.three])
            let spent = try #require(tokens.first { Hex.encode($0.id) == Self.two })
            #expect(spent.state == .spent)
            #expect(tokens.filter { $0.state == .held }.count == 2)
            let receipt = try #require(try wallet.receipt(id: spent.id))
            #expect(receipt.id == spent.receiptID)
            let paid = try store.outgoing(requestID: Hex.decode(Self.payeeRequest))
            #expect(paid.map { Hex.encode($0.token.token.id) } == [Self.two])
            // Both exchange keys are promised to the payer's own request.
            #expect(try store.nextExchangeIndex() == 2)
            #expect(try store.freeExchangeKeys().isEmpty)

            // Opening ran no migration again, and a fresh wallet has exactly the same schema.
            let migrations = try store.database.access { db in
                try db.fetchAll("SELECT identifier FROM grdb_migrations ORDER BY rowid").map { row -> String in try row[0] }
            }
            #expect(migrations == ["v1", "v2"])
            let fresh = try TokenStore(path: directory + "/fresh.khw")
            #expect(try Self.schema(store) == Self.schema(fresh))

            // And it goes on working: a held token runs and is spent.
            let held = try #require(tokens.first { Hex.encode($0.id) == Self.one })
            let run = try store.beginRun(id: held.id, owner: .current(), startedAt: 10)
            try store.commitRun(run, effects: [1], receipt: [2], receiptID: [9, 9], spentAt: 11)
            #expect(try store.token(id: held.id)?.state == .spent)
        }
    }

    @Test func aPaymentGRDBStoredKeepsItsTransferChain() throws {
        try withTemporaryDirectory { directory in
            let store = try TokenStore(path: try Self.copy("grdb-payee.khw", into: directory))
            let token = try #require(try store.token(id: Hex.decode(Self.two)))
            #expect(token.state == .held)
            #expect(token.transfers.count == 1)
            // Its link is format 1, which names no run of the program: read, so the wallet opens, and
            // refused wherever the chain is checked (running or paying it on, a ledger, a payee).
            #expect(token.transfers[0].version == 1)
            #expect { try token.chain.verify() } throws: { ($0 as? TokenError)?.kind == "old_format" }
            #expect(try store.request(id: Hex.decode(Self.payeeRequest)) != nil)
            // The key that received the token is used; the request's other key is not.
            let used = try #require(try store.exchangeKey(token.chain.currentHolder))
            #expect(try used.usedAt != nil && used.requestID == Hex.decode(Self.payeeRequest))
        }
    }

    /// Python's sqlite3 module reads a wallet this keyhost wrote: intact, WAL, every table there.
    @Test func anotherSQLiteReaderFindsTheWalletIntact() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            do {
                let store = try TokenStore(path: path)
                try store.trust(issuer: Fixture.issuerKey.publicKey.xOnly.bytes, now: 1)
                for byte in [UInt8(1), 2, 3] { _ = try store.importToken(Fixture.token(Fixture.id([byte])), now: 1) }
                let run = try store.beginRun(id: Fixture.id([2]), owner: .current(), startedAt: 2)
                try store.commitRun(run, effects: [1], receipt: [2], receiptID: [3], spentAt: 4)
                try store.setSetting("name", Array("outside".utf8))
            }
            let report = try JSONSerialization.jsonObject(with: PythonOracle.run("sqlite_file_oracle.py", [path])) as? [String: Any]
            #expect(report?["integrity_check"] as? [String] == ["ok"])
            #expect(report?["foreign_key_check"] as? Int == 0)
            #expect(report?["journal_mode"] as? String == "wal")
            #expect(report?["user_version"] as? Int == 2)
            #expect(report?["migrations"] as? [String] == ["v1", "v2"])
            #expect(report?["tables"] as? [String: Int] == [
                "settings": 1, "trusted_issuers": 1, "tokens": 3, "runs": 1, "exchange_keys": 0, "requests": 0, "outgoing": 0,
                "grdb_migrations": 2,
            ])
        }
    }
}
