import Foundation
import KeyhostCrypto
import KeyhostTokens
import Testing
@testable import KeyhostWallet

/// The commit of a payment's transfer is where two `pay` processes of one request meet: each planned
/// from what it saw, so the commit itself must refuse a second token to one key and a payment past its
/// amount (found by Tests/e2e/test_token_payments.py: six concurrent pays once paid 40 for a request of 20,
/// two tokens to one key).
@Suite struct WalletPaymentCommitTests {
    static let requestID = [UInt8](repeating: 0x5a, count: 32)

    func chain(_ token: SignedToken, to key: PublicKey) throws -> TokenChain {
        try TokenChain(token: token).appending(to: key, time: 5, receipt: [UInt8](repeating: 1, count: 32)) {
            try Fixture.holderKey.sign(digest: $0).normalized().compact
        }
    }

    /// Claims and commits token `id` as a transfer to `key` of the test request; returns the error, if any.
    func pay(_ store: TokenStore, _ id: [UInt8], to key: PublicKey, amount: UInt64?) throws -> WalletError? {
        let token = Fixture.token(id)
        if try store.token(id: id) == nil { _ = try store.importToken(token, now: 1) }
        let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
        let error = walletError {
            try store.commitRun(run, effects: [0x80], receipt: [1], receiptID: id, spentAt: 3,
                                outgoing: (Self.requestID, try chain(token, to: key)), paymentAmount: amount)
        }
        if error != nil { try store.abortRun(run) }
        return error
    }

    @Test func aSecondTokenToOneKeyOfAPaymentIsRefusedAndStaysHeld() throws {
        try withWallet { store in
            let key = PrivateKey.generate().publicKey
            #expect(try pay(store, Fixture.id([1]), to: key, amount: 1000) == nil)
            let refused = try #require(try pay(store, Fixture.id([2]), to: key, amount: 1000))
            #expect(refused.kind == "payment_race")
            #expect(refused.message.contains("already received a token of this payment") && refused.message.contains("pay the request again"))
            #expect(try store.token(id: Fixture.id([2]))?.state == .held)
            #expect(try store.outgoing(requestID: Self.requestID).count == 1)
            #expect(try store.receipt(tokenID: Fixture.id([2])) == nil)
        }
    }

    @Test func aTokenThatWouldPassTheAmountIsRefused() throws {
        try withWallet { store in
            // Fixture tokens are worth 500: two fit 1000, a third does not.
            #expect(try pay(store, Fixture.id([1]), to: PrivateKey.generate().publicKey, amount: 1000) == nil)
            #expect(try pay(store, Fixture.id([2]), to: PrivateKey.generate().publicKey, amount: 1000) == nil)
            let refused = try #require(try pay(store, Fixture.id([3]), to: PrivateKey.generate().publicKey, amount: 1000))
            #expect(refused.kind == "payment_race" && refused.message.contains("past the amount"))
            #expect(try store.token(id: Fixture.id([3]))?.state == .held)
        }
    }

    @Test func depositsShareTheDepositKeyAndHaveNoAmount() throws {
        try withWallet { store in
            let deposit = Fixture.issuerKey.publicKey.xOnly.evenYPublicKey
            for n: UInt8 in 1...3 {
                let error = try pay(store, Fixture.id([n]), to: deposit, amount: nil)
                #expect(error == nil)
            }
            #expect(try store.outgoing(requestID: Self.requestID).count == 3)
        }
    }
}
