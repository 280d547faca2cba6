import Foundation
import KeyhostCrypto
import KeyhostTokens
import KeyhostTestSupport
import Testing
@testable import KeyhostWallet

/// A link's time is the signer's word; the payee bounds it by what it knows (docs/payments.md, "What a
/// run's `now` guarantees"): not before the link it follows, not past its own clock by more than the
/// ledger's tolerance, not before it asked. An honest payer whose clock is a little behind still pays.
@Suite struct WalletTimeBoundsTests {
    /// When the payee asks, in every test.
    static let asked: Int64 = 1_900_000_000

    /// Stands in for the token's program (these tests are about times, not programs): it completes with
    /// no effects and hands the token on when asked to, for the payer and the payee alike.
    static let runner: (RunRequest) -> RunOutcome = { .completed(effects: [], transferred: $0.transferTo != nil) }

    struct Parties {
        let payer: TokenWallet
        let payee: TokenWallet
        let payerKey: PrivateKey
        let token: SignedToken
        let request: PaymentRequest
    }

    /// A payer holding one 500 EUR-cent token, and a payee's request for it, made at `asked`.
    func withParties(_ body: (Parties) throws -> Void) throws {
        try withTemporaryDirectory(prefix: "keyhost-time") { directory in
            let payer = try TokenWallet.create(path: directory + "/payer.khw")
            let payee = try TokenWallet.create(path: directory + "/payee.khw")
            let payerKey = try #require(try payer.softwareSigner()).key
            let token = try SignedToken.issue(Token(
                id: Fixture.id([7]), issuer: Fixture.issuerKey.publicKey.xOnly, value: 500, unit: "EUR-cent",
                program: TokenProgram(kind: .luaSource, code: Array("local t = ... t.transfer(t.transfer_to)".utf8)), holder: payerKey.publicKey),
                issuerKey: Fixture.issuerKey)
            _ = try payer.importTokens([token], now: Self.asked - 3600)
            let request = try payee.makeRequest(amount: 500, unit: "EUR-cent", issuers: [Fixture.issuerKey.publicKey.xOnly], keys: 2,
                                                expires: Self.asked + 86_400, now: Self.asked, signer: try #require(try payee.softwareSigner()))
            try body(Parties(payer: payer, payee: payee, payerKey: payerKey, token: token, request: request))
        }
    }

    /// `chain` handed on by `key` to `to` at `time`, as a run of the stand-in program would.
    func link(_ chain: TokenChain, by key: PrivateKey, to: PublicKey, time: Int64) throws -> TokenChain {
        try chain.appending(to: to, time: time, effects: []) { try key.sign(digest: $0).normalized().compact }
    }

    func receive(_ p: Parties, _ chain: TokenChain, now: Int64) -> WalletError? {
        walletError { try p.payee.receive(Payment(requestID: p.request.id, chains: [chain]), now: now, runner: Self.runner) }
    }

    @Test func theRequestCarriesItsSignedCreationTime() throws {
        try withParties { p in
            #expect(p.request.created == Self.asked)
            let read = try PaymentRequest(armored: Array(p.request.armored.utf8))
            #expect(read.created == Self.asked && read.signatureIsValid)
            // Moved after signing, the time breaks the signature.
            let moved = PaymentRequest(amount: read.amount, unit: read.unit, issuers: read.issuers, keys: read.keys, expires: read.expires,
                                       created: Self.asked - 3600, payee: read.payee, memo: read.memo, signature: read.signature)
            #expect(throws: TokenError.self) { try moved.validate() }
        }
    }

    @Test func aLinkDatedAfterThePayeesClockPastTheToleranceIsRefused() throws {
        try withParties { p in
            let paid = try link(TokenChain(token: p.token), by: p.payerKey, to: p.request.keys[0], time: Self.asked + LinkTime.maxClockSkew + 100)
            let refused = try #require(receive(p, paid, now: Self.asked))
            #expect(refused.kind == "future_time")
            #expect(refused.message.contains("more than 300 s after this wallet's clock") && refused.message.contains("nothing was received"))
            #expect(try p.payee.store.token(id: p.token.token.id) == nil)
            // Within the tolerance of the payee's clock, the same chain is taken.
            #expect(receive(p, paid, now: Self.asked + 100) == nil)
        }
    }

    @Test func aLinkDatedBeforeTheRequestIsRefused() throws {
        try withParties { p in
            let backdated = try link(TokenChain(token: p.token), by: p.payerKey, to: p.request.keys[0], time: Self.asked - 1)
            let refused = try #require(receive(p, backdated, now: Self.asked + 10))
            #expect(refused.kind == "before_request")
            #expect(refused.message.contains("before this wallet made the request") && refused.message.contains("backdated"))
            #expect(try p.payee.store.token(id: p.token.token.id) == nil)
            let onTime = try link(TokenChain(token: p.token), by: p.payerKey, to: p.request.keys[0], time: Self.asked)
            #expect(receive(p, onTime, now: Self.asked + 10) == nil)
        }
    }

    /// A request keyhost wrote before `created` existed: its payee bounds the link by the time it stored it at.
    @Test func aRequestWithoutACreationTimeUsesTheTimeItWasStored() throws {
        try withParties { p in
            let payeeKey = try #require(try p.payee.softwareSigner())
            let keys = try p.payee.newExchangeKeys(count: 1, now: Self.asked + 1000)
            let old = try PaymentRequest(amount: 500, unit: "EUR-cent", issuers: p.request.issuers, keys: keys,
                                         expires: Self.asked + 86_400, payee: payeeKey.publicKey).signed(payeeKey.sign)
            #expect(old.created == nil)
            try p.payee.store.saveRequest(old, now: Self.asked + 1000)
            try p.payee.store.assign(keys: keys, to: old.id)
            func receive(at time: Int64) throws -> WalletError? {
                let chain = try link(TokenChain(token: p.token), by: p.payerKey, to: keys[0], time: time)
                return walletError { try p.payee.receive(Payment(requestID: old.id, chains: [chain]), now: Self.asked + 1010, runner: Self.runner) }
            }
            #expect(try receive(at: Self.asked + 999)?.kind == "before_request")
            #expect(try receive(at: Self.asked + 1000) == nil)
        }
    }

    @Test func aLinkDatedBeforeTheLinkItFollowsIsRefused() throws {
        try withParties { p in
            let middle = PrivateKey.generate()
            let first = try link(TokenChain(token: p.token), by: p.payerKey, to: middle.publicKey, time: Self.asked + 60)
            let second = try link(first, by: middle, to: p.request.keys[0], time: Self.asked + 30)
            let refused = try #require(receive(p, second, now: Self.asked + 100))
            #expect(refused.kind == "chain")
            #expect(refused.message.contains("transfer 2 of 2 is dated \(Self.asked + 30), before the time of the link it follows (transfer 1, dated \(Self.asked + 60))"))
            #expect(try p.payee.store.token(id: p.token.token.id) == nil)
        }
    }

    /// A payer whose clock is behind the payee's pays at the request's time, so the payee takes it;
    /// further behind than clocks may differ, nothing is spent.
    @Test func aPayerBehindThePayeesClockPaysAtTheRequestsTimeOrSpendsNothing() throws {
        try withParties { p in
            let tooFar = walletError { try p.payer.pay(p.request, now: Self.asked - LinkTime.maxClockSkew - 1, signer: try p.payer.softwareSigner()!, runner: Self.runner) }
            #expect(tooFar?.kind == "clock_skew" && tooFar?.message.contains("nothing was spent") == true)
            #expect(try p.payer.store.token(id: p.token.token.id)?.state == .held)

            let payment = try p.payer.pay(p.request, now: Self.asked - 100, signer: try p.payer.softwareSigner()!, runner: Self.runner)
            #expect(payment.chains.map { $0.transfers.last?.time } == [Self.asked])
            #expect(try p.payee.receive(payment, now: Self.asked, runner: Self.runner).complete)
        }
    }

    /// A payee whose clock is behind its payer's hands the token on no earlier than it came, within
    /// the tolerance, so its own payee takes it; further behind, it stays HELD.
    @Test func aRunHandingOnATokenIsNeverDatedBeforeTheLinkThatBroughtIt() throws {
        try withParties { p in
            let payment = try p.payer.pay(p.request, now: Self.asked + 200, signer: try p.payer.softwareSigner()!, runner: Self.runner)
            _ = try p.payee.receive(payment, now: Self.asked, runner: Self.runner)
            let payeeSigner = try #require(try p.payee.softwareSigner())
            let issuer = Fixture.issuerKey.publicKey.xOnly
            let behind = walletError { try p.payee.depositChains(ids: [p.token.token.id], now: Self.asked - 200, signer: payeeSigner, runner: Self.runner) }
            #expect(behind?.kind == "clock_skew")
            let chains = try p.payee.depositChains(ids: [p.token.token.id], now: Self.asked, signer: payeeSigner, runner: Self.runner)
            #expect(chains.count == 1 && chains[0].transfers.map(\.time) == [Self.asked + 200, Self.asked + 200])
            #expect(chains[0].isDeposit && chains[0].currentHolder == TokenChain.depositKey(issuer: issuer))
            try chains[0].verify()
        }
    }
}
