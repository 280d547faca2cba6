import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Synchronization
import Testing

/// A chain the ledger recorded before is answered from its record, with no re-run of its program
/// (issue 31, D): a deposit sent again costs a database read, not the chain's verification.
@Suite struct KnownChainTests {
    /// Counts the links a ledger asks its worker to re-run.
    final class CountingRunner: Sendable {
        private let count = Mutex(0)
        var links: Int { count.withLock { $0 } }
        func run(_ request: LinkRunsRequest) -> [RunOutcome] {
            count.withLock { $0 += request.links.count }
            return Fixtures.programs.runLinks(request)
        }
    }

    static func ledger(_ backend: String, runner: CountingRunner) async throws -> TokenLedger {
        try TokenLedger(store: try await StoreTests.store(backend), issuers: [Fixtures.issuer.publicKey.xOnly], linkPrograms: { runner.run($0) })
    }

    /// Deposits `chains` and reports the work the ledger announced before verifying.
    static func deposit(_ ledger: TokenLedger, _ chains: [TokenChain]) async throws -> ([String], DepositWork?) {
        var announced: DepositWork?
        let results = try await ledger.deposit(chains) { announced = $0 }
        return (results.map(\.name), announced)
    }

    @Test(arguments: StoreTests.backends) func recordedChainsAreNotRunAgain(backend: String) async throws {
        let runner = CountingRunner()
        let ledger = try await Self.ledger(backend, runner: runner)
        defer { Task { await ledger.store.close() } }
        let token = try Fixtures.token(value: 70)
        let first = try Fixtures.deposit(token, via: 2), fork = try Fixtures.deposit(token, via: 3)
        let other = try Fixtures.deposit(try Fixtures.token())

        // New chains are verified, a chain given twice in the batch once.
        let (initial, work) = try await Self.deposit(ledger, [first, fork, first, other])
        #expect(initial == ["accepted", "double_spend", "already_deposited", "accepted"])
        #expect(work == DepositWork(chains: 3, links: 9) && runner.links == 9)

        // The same chains again: every answer from the record, nothing run, nothing announced.
        let (again, none) = try await Self.deposit(ledger, [fork, first, other, fork])
        #expect(again == ["double_spend", "already_deposited", "already_deposited", "double_spend"])
        #expect(none == DepositWork(chains: 0, links: 0))
        #expect(runner.links == 9, "a recorded chain was re-run")
        // The proof made again from the record is the recorded one's: keys[1] signed twice.
        let proof = try #require(try await ledger.deposit([fork]).first?.proof)
        #expect(try proof.verify() == Fixtures.keys[1].publicKey)

        // A chain the ledger has not seen, of a recorded token, is still verified before it can prove
        // anything: its links may be forged to frame a holder.
        let third = try Fixtures.deposit(token, via: 4)
        let (late, lateWork) = try await Self.deposit(ledger, [first, third])
        #expect(late == ["already_deposited", "double_spend"] && lateWork == DepositWork(chains: 1, links: 3) && runner.links == 12)
        let stats = try await ledger.stats()
        #expect(stats.tokens == 2 && stats.doubleSpends == 2)
    }

    /// A forged chain of a recorded token is refused as before, and `admit` refusing the work stops the
    /// deposit before anything runs or is recorded.
    @Test func forgedForkIsVerifiedAndRefusalRunsNothing() async throws {
        let runner = CountingRunner()
        let ledger = try await Self.ledger("sqlite", runner: runner)
        defer { Task { await ledger.store.close() } }
        let token = try Fixtures.token()
        #expect(try await ledger.deposit([try Fixtures.deposit(token)]).map(\.name) == ["accepted"])
        let honest = try Fixtures.deposit(token, via: 3)
        let link = honest.transfers[2]
        let forged = TokenChain(token: token, transfers: Array(honest.transfers[..<2]) + [try Fixtures.signed(Transfer(
            tokenID: link.tokenID, index: link.index, previous: link.previous, to: link.to, time: link.time,
            receipt: secureRandomBytes(32), signature: []), by: 3)])
        await #expect { try await ledger.deposit([forged]) } throws: { ($0 as? LedgerError)?.kind == "unauthorised_transfer" }

        struct Refused: Error {}
        let before = runner.links
        await #expect(throws: Refused.self) { try await ledger.deposit([honest, try Fixtures.deposit(try Fixtures.token())]) { _ in throw Refused() } }
        #expect(runner.links == before)
        let stats = try await ledger.stats()
        #expect(stats.tokens == 1 && stats.doubleSpends == 0)
    }
}

extension Fixtures {
    /// `link` signed by keys[`key`].
    static func signed(_ link: Transfer, by key: Int) throws -> Transfer {
        Transfer(tokenID: link.tokenID, index: link.index, previous: link.previous, to: link.to, time: link.time,
                 arguments: link.arguments, receipt: link.receipt, signature: try ProtocolSignature.sign(link.digest, with: keys[key]))
    }
}
