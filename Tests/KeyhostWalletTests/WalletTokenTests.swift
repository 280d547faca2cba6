import Foundation
import KeyhostSQLite
import KeyhostCrypto
import KeyhostTokens
import KeyhostTestSupport
import Testing
@testable import KeyhostWallet

/// Importing, listing and finding tokens; trusted issuers; the schema's own guards.
@Suite struct WalletTokenTests {
    @Test func importingTwiceReportsTheTokenAlreadyPresent() throws {
        try withWallet { store in
            let token = Fixture.token(Fixture.id([0xaa]))
            #expect(try store.importToken(token, now: 100) == .added)
            #expect(try store.importToken(token, now: 200) == .alreadyPresent(.held))
            let stored = try #require(try store.token(id: token.token.id))
            #expect(stored.token == token)
            #expect(stored.state == .held)
            #expect(stored.importedAt == 100)
            #expect(stored.spentAt == nil && stored.receiptID == nil && stored.pendingOwner == nil)
        }
    }

    @Test func aDifferentTokenWithTheSameIdIsRefused() throws {
        try withWallet { store in
            let id = Fixture.id([0xbb])
            _ = try store.importToken(Fixture.token(id, program: "return 1"), now: 1)
            let error = try #require(walletError { try store.importToken(Fixture.token(id, program: "return 2"), now: 2) })
            #expect(error.kind == "conflict")
            #expect(error.message.contains("a different token with the same id"))
            #expect(try store.token(id: id)?.token.token.program.code == Array("return 1".utf8))
        }
    }

    @Test func tokensAreListedByImportTimeThenId() throws {
        try withWallet { store in
            let late = Fixture.id([0x01]), earlyB = Fixture.id([0x0b]), earlyA = Fixture.id([0x0a])
            _ = try store.importToken(Fixture.token(late), now: 20)
            _ = try store.importToken(Fixture.token(earlyB), now: 10)
            _ = try store.importToken(Fixture.token(earlyA), now: 10)
            #expect(try store.tokens().map(\.id) == [earlyA, earlyB, late])
            #expect(try store.token(id: Fixture.id([0x99])) == nil)
        }
    }

    @Test func findTakesAUniqueHexPrefix() throws {
        try withWallet { store in
            let one = Fixture.id([0xab, 0xcd, 0x01]), two = Fixture.id([0xab, 0xcd, 0x02]), three = Fixture.id([0x12, 0x34])
            for id in [one, two, three, Fixture.id([0xab, 0xcd, 0x03])] { _ = try store.importToken(Fixture.token(id), now: 1) }
            #expect(try store.find(idPrefix: "abcd01").id == one)
            #expect(try store.find(idPrefix: "ABCD02").id == two)
            #expect(try store.find(idPrefix: "1234").id == three)
            let ambiguous = try #require(walletError { try store.find(idPrefix: "abcd") })
            #expect(ambiguous.kind == "ambiguous")
            #expect(ambiguous.message.hasPrefix("3 tokens"))
            let none = try #require(walletError { try store.find(idPrefix: "ffff") })
            #expect(none.kind == "not_found")
            #expect(walletError { try store.find(idPrefix: "abc") }?.kind == "invalid")
            #expect(walletError { try store.find(idPrefix: "abcx") }?.kind == "invalid")
        }
    }

    /// The lookup is a range on the id's bytes; this checks it against the plain definition (the id's
    /// hex starts with the prefix) at nibble and byte boundaries, odd lengths, and all-f prefixes.
    @Test func findAgreesWithHexPrefixMatchingAtEveryBoundary() throws {
        try withWallet { store in
            let ids = [
                Fixture.id([0x00], fill: 0x00), Fixture.id([0xab, 0xcd, 0xff], fill: 0xff), Fixture.id([0xab, 0xce], fill: 0x00),
                Fixture.id([0xab, 0xcd, 0x0f]), Fixture.id([0xab, 0xcd, 0x10]), Fixture.id([0xab, 0xc0]), Fixture.id([0xab, 0xbf], fill: 0xff),
                Fixture.id([0xff, 0xff], fill: 0xff), Fixture.id([0xff, 0xfe]), Fixture.id([0xf0, 0x00]),
            ]
            for id in ids { _ = try store.importToken(Fixture.token(id), now: 1) }
            let hexIDs = ids.map { Hex.encode($0) }
            var prefixes = ["0000", "abcd", "abcd0", "abcd1", "abcdf", "abcdff", "abce", "abc0", "abbf", "abcf", "ffff", "fffff", "fffe",
                            "f000", "efff", "ABCD0F", hexIDs[1], hexIDs[7], String(hexIDs[3].dropLast())]
            for id in hexIDs { prefixes.append(String(id.prefix(5))); prefixes.append(String(id.prefix(9))) }
            for prefix in prefixes {
                let expected = hexIDs.filter { $0.hasPrefix(prefix.lowercased()) }
                switch expected.count {
                case 0: #expect(walletError { try store.find(idPrefix: prefix) }?.kind == "not_found", "\(prefix)")
                case 1: #expect(try Hex.encode(store.find(idPrefix: prefix).id) == expected[0], "\(prefix)")
                default:
                    let error = walletError { try store.find(idPrefix: prefix) }
                    #expect(error?.kind == "ambiguous" && error?.message.hasPrefix("\(expected.count) tokens") == true, "\(prefix): \(String(describing: error))")
                }
            }
        }
    }

    @Test func issuersAreTrustedAndDistrusted() throws {
        try withWallet { store in
            let first = Fixture.issuerKey.publicKey.xOnly.bytes, second = Fixture.holderKey.publicKey.xOnly.bytes
            #expect(try !store.isTrusted(issuer: first))
            try store.trust(issuer: second, now: 20)
            try store.trust(issuer: first, now: 10)
            try store.trust(issuer: first, now: 30)  // again: keeps the first date, so the order
            #expect(try store.isTrusted(issuer: first))
            #expect(try store.trustedIssuers() == [first, second])
            try store.distrust(issuer: first)
            try store.distrust(issuer: first)
            #expect(try !store.isTrusted(issuer: first))
            #expect(try store.trustedIssuers() == [second])
            #expect(walletError { try store.trust(issuer: [1, 2, 3], now: 1) }?.kind == "invalid")
            #expect(walletError { try store.trust(issuer: [UInt8](repeating: 0xff, count: 32), now: 1) }?.kind == "invalid")
        }
    }

    /// Raw SQL that breaks the state machine is refused by the schema itself.
    @Test func theSchemaRefusesSpentWithoutARunAndARunWithoutSpent() throws {
        try withWallet { store in
            let id = Fixture.id([0xcc])
            _ = try store.importToken(Fixture.token(id), now: 1)
            try store.database.access { db throws in
                // SPENT with no runs row: the foreign key on receipt_id fails at commit.
                let spentWithoutRun = thrown(SQLiteError.self) {
                    try db.transaction { db in
                        try db.execute(
                            "UPDATE tokens SET state = 'SPENT', run_id = zeroblob(16), spent_at = 1, receipt_id = x'01' WHERE id = ?", [id])
                    }
                }
                #expect(spentWithoutRun?.extendedCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
                // A run for a token that is not SPENT: the foreign key on (token_id, 'SPENT') fails at commit.
                let runWithoutSpent = thrown(SQLiteError.self) {
                    try db.transaction { db in
                        try db.execute(
                            "INSERT INTO runs (token_id, run_id, receipt_id, receipt, effects, owner_pid, started_at, spent_at) VALUES (?, zeroblob(16), x'01', x'', x'', 1, 1, 1)",
                            [id])
                    }
                }
                #expect(runWithoutSpent?.extendedCode == 787)
                // PENDING without an owner breaks a CHECK.
                let pendingWithoutOwner = thrown(SQLiteError.self) {
                    try db.execute("UPDATE tokens SET state = 'PENDING', run_id = zeroblob(16) WHERE id = ?", [id])
                }
                #expect(pendingWithoutOwner?.extendedCode == 275)  // SQLITE_CONSTRAINT_CHECK
            }
            #expect(try store.token(id: id)?.state == .held)
            #expect(try store.receipt(tokenID: id) == nil)

            // And a spent token stays spent, with its run.
            let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
            try store.commitRun(run, effects: [1], receipt: [2], receiptID: [3], spentAt: 4)
            try store.database.access { db throws in
                let unspend = thrown(SQLiteError.self) {
                    try db.execute("UPDATE tokens SET state = 'HELD', run_id = NULL, spent_at = NULL, receipt_id = NULL WHERE id = ?", [id])
                }
                #expect(unspend?.message == "a spent token stays spent")
                #expect(thrown(SQLiteError.self) { try db.execute("DELETE FROM runs") }?.message == "a committed run is never deleted")
                #expect(thrown(SQLiteError.self) { try db.execute("UPDATE runs SET effects = x'00'") }?.message == "a committed run is never changed")
            }
            #expect(try store.token(id: id)?.state == .spent)
        }
    }
}
