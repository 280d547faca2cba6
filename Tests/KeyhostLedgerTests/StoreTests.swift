import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerPostgres
import KeyhostTokens
import Testing

/// The ledger's rules on both real backends: a SQLite file and a PostgreSQL server.
@Suite struct StoreTests {
    static let backends = ["sqlite", "postgres"]

    static func store(_ backend: String) async throws -> any LedgerStore {
        switch backend {
        case "sqlite":
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
            return try SQLiteLedgerStore(path: path)
        default:
            return try await PostgresHarness.store(try PostgresHarness.get().newDatabase())
        }
    }

    static func ledger(_ backend: String) async throws -> TokenLedger {
        try TokenLedger(store: try await store(backend), issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run)
    }

    @Test(arguments: backends) func acceptedThenAlreadyDepositedThenDoubleSpend(backend: String) async throws {
        let ledger = try await Self.ledger(backend)
        defer { Task { await ledger.store.close() } }
        let token = try Fixtures.token(value: 250)
        let first = try Fixtures.deposit(token, via: 2)
        let other = try Fixtures.deposit(token, via: 3)

        let r1 = try await ledger.deposit([first])
        #expect(r1.map(\.name) == ["accepted"] && r1[0].tokenID == token.token.id)
        let r2 = try await ledger.deposit([first])
        #expect(r2.map(\.name) == ["already_deposited"])

        let r3 = try await ledger.deposit([other])
        #expect(r3.map(\.name) == ["double_spend"])
        let proof = try #require(r3[0].proof)
        // keys[1] handed the token both to keys[2] and to keys[3]: the proof names keys[1].
        #expect(try proof.verify() == Fixtures.keys[1].publicKey)
        #expect(try FraudProof(armored: Array(proof.armored.utf8)).verify() == Fixtures.keys[1].publicKey)
        // The same double spend again is the same answer, and is counted once.
        let r4 = try await ledger.deposit([other])
        #expect(r4.map(\.name) == ["double_spend"])
        // The first chain still gets its own answer.
        #expect(try await ledger.deposit([first]).map(\.name) == ["already_deposited"])

        let stats = try await ledger.stats()
        #expect(stats.tokens == 1 && stats.doubleSpends == 1 && stats.totals == ["EUR-cent": "250"])
    }

    @Test(arguments: backends) func sameTokenTwiceInOneBatch(backend: String) async throws {
        let ledger = try await Self.ledger(backend)
        defer { Task { await ledger.store.close() } }
        let token = try Fixtures.token()
        let a = try Fixtures.deposit(token, via: 2), b = try Fixtures.deposit(token, via: 4)
        let second = try Fixtures.deposit(try Fixtures.token())
        let results = try await ledger.deposit([a, second, a, b])
        #expect(results.map(\.name) == ["accepted", "accepted", "already_deposited", "double_spend"])
        #expect(try results[3].proof?.verify() == Fixtures.keys[1].publicKey)
    }

    /// Every broken rule refuses the whole batch, names the chain's position and the problem, and records nothing.
    @Test(arguments: backends) func badChainsAreRefusedAndNothingIsRecorded(backend: String) async throws {
        let ledger = try await Self.ledger(backend)
        defer { Task { await ledger.store.close() } }
        let good = try Fixtures.deposit(try Fixtures.token())
        let token = try Fixtures.token()
        let honest = try Fixtures.deposit(token)

        // Tampered: link 1's time changed after it was signed.
        let t = honest.transfers[1]
        let altered = Transfer(tokenID: t.tokenID, index: t.index, previous: t.previous, to: t.to, time: t.time - 1, receipt: t.receipt, signature: t.signature)
        let tampered = TokenChain(token: token, transfers: [honest.transfers[0], altered, honest.transfers[2]])

        // Wrong signer: keys[2] signs link 1, which only keys[1] (the holder there) may sign.
        let start = try Fixtures.pass(TokenChain(token: token), from: 0, to: Fixtures.keys[1].publicKey)
        let unsigned = Transfer(tokenID: token.token.id, index: 1, previous: start.previousHash(at: 1), to: Fixtures.depositKey(),
                                time: Fixtures.now - 60, receipt: Array(repeating: 9, count: 32), signature: [])
        let forged = Transfer(tokenID: unsigned.tokenID, index: 1, previous: unsigned.previous, to: unsigned.to, time: unsigned.time,
                              receipt: unsigned.receipt, signature: try ProtocolSignature.sign(unsigned.digest, with: Fixtures.keys[2]))
        let wrongSigner = TokenChain(token: token, transfers: start.transfers + [forged])

        // Not a deposit: the last link goes to a holder, or the deposit key appears before the end.
        let toHolder = try Fixtures.pass(start, from: 1, to: Fixtures.keys[2].publicKey)
        // The issuer signs its deposit key's links; a chain that goes on after a deposit is no deposit.
        let beyond = try TokenChain(token: token, transfers: []).appending(to: Fixtures.depositKey(), time: Fixtures.now - 60, receipt: Array(repeating: 1, count: 32)) {
            try ProtocolSignature.sign($0, with: Fixtures.keys[0])
        }.appending(to: Fixtures.depositKey(), time: Fixtures.now - 60, receipt: Array(repeating: 2, count: 32)) {
            try ProtocolSignature.sign($0, with: PrivateKey(bytes: Self.evenSecret(Fixtures.issuer)))
        }

        // An issuer this ledger does not serve.
        let foreign = try Fixtures.deposit(try Fixtures.token(issuer: Fixtures.otherIssuer))
        // Expired before the deposit link was made.
        let expired = try Fixtures.deposit(try Fixtures.token(expires: Fixtures.now - 3600))
        // Deposit link timed an hour in the ledger's future.
        let future = try Fixtures.deposit(try Fixtures.token(), time: Fixtures.now + 3600)

        let cases: [(TokenChain, String, String)] = [
            (tampered, "invalid_chain", "not signed by the holder"),
            (wrongSigner, "invalid_chain", "not signed by the holder"),
            (toHolder, "not_deposit", "deposit key"),
            (beyond, "not_deposit", "deposit key"),
            (foreign, "unknown_issuer", "not one this ledger serves"),
            (expired, "expired", "expired"),
            (future, "future_time", "clock"),
        ]
        for (chain, kind, words) in cases {
            await #expect {
                _ = try await ledger.deposit([good, chain])
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == kind && error.index == 1 && error.message.hasPrefix("chain 1: ") && error.message.contains(words)
            }
        }
        let stats = try await ledger.stats()
        #expect(stats.tokens == 0 && stats.doubleSpends == 0)
        // The good chain was never recorded by the refused batches.
        #expect(try await ledger.deposit([good]).map(\.name) == ["accepted"])
    }

    /// The time bounds a ledger knows (docs/payments.md, "What a run's `now` guarantees"): links in
    /// time order, the deposit link not past its clock by more than the tolerance, and not older than
    /// the issuer's max_deposit_age. Each refused with its kind, recording nothing.
    @Test(arguments: backends) func linkTimesOutOfTheirBoundsAreRefused(backend: String) async throws {
        let ledger = try await Self.ledger(backend)
        defer { Task { await ledger.store.close() } }
        let now = Fixtures.now
        let good = try Fixtures.deposit(try Fixtures.token())
        // Link 1 dated before link 0: the deposit link's time alone is fine, so only the order gives it away.
        let backwards = try Fixtures.deposit(try Fixtures.token(), times: [now - 60, now - 120, now - 100])
        let future = try Fixtures.deposit(try Fixtures.token(), time: now + LinkTime.maxClockSkew + 3600)
        let dayOnly = TokenPolicy(maxDepositAge: 86_400)
        let stale = try Fixtures.deposit(try Fixtures.token(policy: dayOnly), time: now - 86_400 - 3600)
        let cases: [(TokenChain, String, [String])] = [
            (backwards, "invalid_chain", ["transfer 2 of 3 is dated \(now - 120), before the time of the link it follows (transfer 1, dated \(now - 60))"]),
            (future, "future_time", ["more than 300 s after the ledger's clock"]),
            (stale, "stale_deposit", ["more than the 86400 s", "max_deposit_age"]),
        ]
        for (chain, kind, words) in cases {
            await #expect {
                _ = try await ledger.deposit([good, chain])
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == kind && error.index == 1 && words.allSatisfy(error.message.contains)
            }
        }
        #expect(try await ledger.stats().tokens == 0)
        // Inside the bounds: in order (equal times too), within the tolerance, and younger than the maximum age.
        let inOrder = try Fixtures.deposit(try Fixtures.token(), times: [now - 120, now - 120, now - 60])
        let soon = try Fixtures.deposit(try Fixtures.token(), time: now + LinkTime.maxClockSkew - 60)
        let young = try Fixtures.deposit(try Fixtures.token(policy: dayOnly), time: now - 86_400 + 3600)
        #expect(try await ledger.deposit([good, inOrder, soon, young]).map(\.name) == Array(repeating: "accepted", count: 4))
    }

    @Test(arguments: backends) func totalsBeyondSixtyFourBits(backend: String) async throws {
        let ledger = try await Self.ledger(backend)
        defer { Task { await ledger.store.close() } }
        let chains = try [UInt64.max, UInt64.max, 7].map { try Fixtures.deposit(try Fixtures.token(value: $0, unit: "BIG")) }
            + [try Fixtures.deposit(try Fixtures.token(value: 5, unit: "SMALL"))]
        #expect(try await ledger.deposit(chains).map(\.name) == Array(repeating: "accepted", count: 4))
        let stats = try await ledger.stats()
        #expect(stats.tokens == 4)
        #expect(stats.totals == ["BIG": "36893488147419103237", "SMALL": "5"])
        #expect(stats.tokensByUnit == ["BIG": 3, "SMALL": 1])
    }

    @Test func sqliteLedgerFileIsPrivate() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let store = try SQLiteLedgerStore(path: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        await store.close()
        chmod(path, 0o644)
        #expect { try SQLiteLedgerStore(path: path) } throws: { ($0 as? LedgerError)?.kind == "permissions" }
    }

    /// The secret of the issuer's key with even Y: the key that signs for the deposit key 02‖issuer.
    static func evenSecret(_ key: PrivateKey) -> [UInt8] {
        let secret = key.revealedBytes()
        if key.publicKey.compressed[0] == 0x02 { return secret }
        // n - d has the negated public key.
        let n: [UInt8] = Array(try! Hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in (0..<32).reversed() {
            let v = Int(n[i]) - Int(secret[i]) - borrow
            out[i] = UInt8((v + 256) % 256)
            borrow = v < 0 ? 1 : 0
        }
        return out
    }
}
