import Foundation
import KeyhostCrypto
import KeyhostTestSupport
import KeyhostTokens
import Testing
@testable import KeyhostWallet

/// Two `pay` runs of one wallet at once, interleaved step by step (each on its own connection to the wallet
/// file, as two processes would be): the loser is told `payment_race` whether the token it picked was still
/// PENDING in the winner's run or already SPENT by it (it was told `running` or `already_spent` before).
@Suite(.serialized) struct WalletPaymentRaceTests {
    /// A runner that hands the token on; with `gate`, the first run signals `entered` and waits for `gate`.
    final class Runner: @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0)
        let gate: DispatchSemaphore?
        private let lock = NSLock()
        private var calls = 0

        init(gated: Bool) { gate = gated ? DispatchSemaphore(value: 0) : nil }

        func run(_ request: RunRequest) -> RunOutcome {
            lock.lock()
            calls += 1
            let first = calls == 1
            lock.unlock()
            if first, let gate {
                entered.signal()
                gate.wait()
            }
            return .completed(effects: [], transferred: true)
        }
    }

    /// What each payment's thread ended with.
    final class Outcomes: @unchecked Sendable {
        var loser: Result<Payment, Error>?
        var winner: Result<Payment, Error>?
    }

    /// A payer holding two tokens of 500, and a payee's requests.
    struct World {
        let directory: String
        let payerPath: String
        let payer: TokenWallet
        let payee: TokenWallet

        init(_ directory: String) throws {
            self.directory = directory
            payerPath = directory + "/payer.khw"
            payer = try TokenWallet.create(path: payerPath)
            payee = try TokenWallet.create(path: directory + "/payee.khw")
            let holder = try payer.holder().publicKey
            for n: UInt8 in 1...2 {
                let token = Token(id: Fixture.id([n]), issuer: Fixture.issuerKey.publicKey.xOnly, value: 500, unit: "EUR-cent",
                                  program: TokenProgram(kind: .luaSource, code: Array("return true".utf8)), holder: holder)
                _ = try payer.importTokens([try SignedToken.issue(token, issuerKey: Fixture.issuerKey)], now: 1)
            }
        }

        func request(_ amount: UInt64, keys: Int) throws -> PaymentRequest {
            try payee.makeRequest(amount: amount, unit: "EUR-cent", issuers: [Fixture.issuerKey.publicKey.xOnly], keys: keys,
                                  expires: 1_000_000, now: 2, signer: try #require(try payee.softwareSigner()))
        }

        /// Another process's view of the payer's wallet: its own connection.
        func payerAgain() throws -> TokenWallet { try TokenWallet(path: payerPath) }
    }

    /// The loser (paying 1000: both tokens) is held inside its first token's run while the winner (paying 500)
    /// takes the other token; `winnerGated` keeps the winner inside its run while the loser goes on.
    func race(winnerGated: Bool) throws -> (loser: Result<Payment, Error>, winner: Result<Payment, Error>, world: World) {
        try withTemporaryDirectory(prefix: "keyhost-race") { directory in
            let world = try World(directory)
            let loserRequest = try world.request(1000, keys: 2), winnerRequest = try world.request(500, keys: 1)
            let loserWallet = world.payer, winnerWallet = try world.payerAgain()
            let loserSigner = try #require(try loserWallet.softwareSigner()), winnerSigner = try #require(try winnerWallet.softwareSigner())
            let loserRunner = Runner(gated: true), winnerRunner = Runner(gated: winnerGated)
            let outcomes = Outcomes()
            let loserDone = DispatchSemaphore(value: 0), winnerDone = DispatchSemaphore(value: 0)
            Thread {
                outcomes.loser = Result { try loserWallet.pay(loserRequest, now: 3, signer: loserSigner, runner: loserRunner.run) }
                loserDone.signal()
            }.start()
            // The loser planned both tokens and is running the first: the winner can only take the second.
            #expect(loserRunner.entered.wait(timeout: .now() + 60) == .success)
            Thread {
                outcomes.winner = Result { try winnerWallet.pay(winnerRequest, now: 3, signer: winnerSigner, runner: winnerRunner.run) }
                winnerDone.signal()
            }.start()
            if winnerGated {
                #expect(winnerRunner.entered.wait(timeout: .now() + 60) == .success)
                loserRunner.gate?.signal()
                #expect(loserDone.wait(timeout: .now() + 60) == .success)
                winnerRunner.gate?.signal()
                #expect(winnerDone.wait(timeout: .now() + 60) == .success)
            } else {
                #expect(winnerDone.wait(timeout: .now() + 60) == .success)
                loserRunner.gate?.signal()
                #expect(loserDone.wait(timeout: .now() + 60) == .success)
            }
            return (try #require(outcomes.loser), try #require(outcomes.winner), world)
        }
    }

    func loserError(_ result: Result<Payment, Error>) -> WalletError? {
        guard case .failure(let error as WalletError) = result else { Issue.record("the loser got \(result)"); return nil }
        return error
    }

    @Test func theLoserToARunStillPendingIsToldPaymentRace() throws {
        let (loser, winner, _) = try race(winnerGated: true)
        #expect((try? winner.get())?.chains.count == 1)
        let error = try #require(loserError(loser))
        #expect(error.kind == "payment_race", "\(error.kind): \(error.message)")
        #expect(error.message.contains("PENDING") && error.message.contains("500 of 1000 EUR-cent") && error.message.contains("pay the request again"),
                "\(error.message)")
    }

    @Test func theLoserToARunAlreadyCommittedIsToldPaymentRace() throws {
        let (loser, winner, _) = try race(winnerGated: false)
        #expect((try? winner.get())?.chains.count == 1)
        let error = try #require(loserError(loser))
        #expect(error.kind == "payment_race", "\(error.kind): \(error.message)")
        #expect(error.message.contains("spent it meanwhile") && error.message.contains("pay the request again"), "\(error.message)")
    }
}
