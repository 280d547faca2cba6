import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Testing

/// Only a run of a token's program moves it: every ledger (SQLite in this process, PostgreSQL in this
/// process and through a keyhost-ledger child) re-runs the program for each link and refuses links the
/// holder signed by hand (docs/payments.md, "Who may move a token").
@Suite struct TransferRunTests {
    static let voucher = TokenProgram(kind: .luaSource, code: Array("local t = ...\nt.emit { redeemed_at = t.args.shop }\n".utf8))
    /// Hands the token on and records where to: a run's receipt depends on the key it was asked for.
    static let recording = TokenProgram(kind: .luaSource, code: Array("local t = ... t.transfer(t.transfer_to) t.emit { to = t.hex.encode(t.transfer_to) }".utf8))

    static func token(_ program: TokenProgram) throws -> SignedToken {
        try SignedToken.issue(Token(id: Fixtures.randomID(), issuer: Fixtures.issuer.publicKey.xOnly, value: 1000, unit: "EUR-cent",
                                    program: program, holder: Fixtures.keys[0].publicKey), issuerKey: Fixtures.issuer)
    }

    static func sign(_ digest: [UInt8]) throws -> [UInt8] { try ProtocolSignature.sign(digest, with: Fixtures.keys[0]) }

    /// Hand-signed deposits: each with a receipt no run of the program made.
    static func forgeries() throws -> [(String, TokenChain)] {
        let now = Fixtures.now - 60
        let deposit = Fixtures.depositKey()
        let voucher = TokenChain(token: try token(Self.voucher))
        let cash = TokenChain(token: try token(Self.recording))
        let elsewhere = Fixtures.keys[3].publicKey
        let effectsToDeposit: [CBORValue] = [.map([CBORPair(.text("to"), .text(Hex.encode(deposit.compressed)))])]
        let effectsElsewhere: [CBORValue] = [.map([CBORPair(.text("to"), .text(Hex.encode(elsewhere.compressed)))])]
        let otherRun = Receipt(chain: cash, arguments: .map([]), now: now, effects: effectsElsewhere, transferTo: elsewhere).digest
        return [
            ("a voucher, random receipt", try voucher.appending(to: deposit, time: now, receipt: secureRandomBytes(32), sign: sign)),
            ("a voucher, the receipt a transfer would have", try voucher.appending(to: deposit, time: now, effects: [], sign: sign)),
            ("random receipt", try cash.appending(to: deposit, time: now, receipt: secureRandomBytes(32), sign: sign)),
            ("another run's receipt", try cash.appending(to: deposit, time: now, receipt: otherRun, sign: sign)),
            ("effects naming another key", try cash.appending(to: deposit, time: now, effects: effectsElsewhere, sign: sign)),
            ("other arguments", try cash.appending(to: deposit, time: now, receipt: Receipt(
                chain: cash, arguments: .map([CBORPair(.text("memo"), .text("x"))]), now: now, effects: effectsToDeposit, transferTo: deposit).digest, sign: sign)),
            ("another time", try cash.appending(to: deposit, time: now, receipt: Receipt(
                chain: cash, arguments: .map([]), now: now - 1, effects: effectsToDeposit, transferTo: deposit).digest, sign: sign)),
        ]
    }

    static func honest() throws -> TokenChain {
        let deposit = Fixtures.depositKey()
        return try TokenChain(token: try token(Self.recording)).appending(
            to: deposit, time: Fixtures.now - 60, effects: [.map([CBORPair(.text("to"), .text(Hex.encode(deposit.compressed)))])], sign: sign)
    }

    @Test(arguments: StoreTests.backends) func handSignedLinksAreRefused(backend: String) async throws {
        let ledger = try await StoreTests.ledger(backend)
        defer { Task { await ledger.store.close() } }
        for (name, forged) in try Self.forgeries() {
            try forged.verify()  // every signature holds: only the program's run is missing
            await #expect(Comment(rawValue: name)) { try await ledger.deposit([forged]) } throws: { error in
                guard let error = error as? LedgerError, error.kind == "unauthorised_transfer" else { return false }
                return name.hasPrefix("a voucher")
                    ? error.message.contains("does not hand the token on") && error.message.contains("voucher")
                    : error.message.contains("is not the receipt of the program's run")
            }
        }
        #expect(try await ledger.stats().tokens == 0)
        #expect(try await ledger.deposit([try Self.honest()]).map(\.name) == ["accepted"])
    }

    /// keyhost's own path to PostgreSQL: the keyhost-ledger child re-runs programs with the keyhost it was given.
    @Test func handSignedLinksAreRefusedThroughTheChild() throws {
        let pg = try PostgresHarness.get()
        let ledger = try LedgerProcess(location: try PostgresLocation(url: LedgerProcessTests.url(pg, try pg.newDatabase())),
                                       issuers: [Fixtures.issuer.publicKey.xOnly], worker: Fixtures.worker)
        defer { ledger.close() }
        for (name, forged) in try Self.forgeries() {
            #expect(Comment(rawValue: name)) { try ledger.deposit([forged]) } throws: { ($0 as? LedgerError)?.kind == "unauthorised_transfer" }
        }
        #expect(try ledger.deposit([try Self.honest()]).map(\.name) == ["accepted"])
    }

    /// A ledger asks a warm worker for all of a chain's runs in one exchange (`runLinks`). Its answers
    /// must be the runs one at a time would give, stop at the first run that refuses its link, and
    /// lead to the same verdict, for honest chains and for a bad link at each position.
    @Test func aChainsRunsInOneExchangeAnswerAsRunsOneAtATime() throws {
        // Hands the token on unless its arguments say fail; emits where to.
        let program = TokenProgram(kind: .luaSource, code: Array("""
            local t = ... if t.args.fail then error('refused by the program') end
            if not t.args.keep then t.transfer(t.transfer_to) end t.emit { to = t.hex.encode(t.transfer_to) }
            """.utf8))
        let token = try Self.token(program)
        let keys = [Fixtures.keys[1].publicKey, Fixtures.keys[2].publicKey, Fixtures.depositKey()]
        let time = Fixtures.now - 60
        /// keys[0] → keys[1] → keys[2] → deposit, link `bad` (if any) signed with `arguments` and a
        /// receipt as if the run had handed the token on.
        func chain(bad: Int?, arguments: CBORValue) throws -> TokenChain {
            var chain = TokenChain(token: token)
            for (i, next) in keys.enumerated() {
                let effects: [CBORValue] = [.map([CBORPair(.text("to"), .text(Hex.encode(next.compressed)))])]
                chain = try chain.appending(to: next, time: time, arguments: i == bad ? arguments : .map([]), effects: effects) {
                    try ProtocolSignature.sign($0, with: Fixtures.keys[i])
                }
            }
            return chain
        }
        let failing = CBORValue.map([CBORPair(.text("fail"), .bool(true))])
        let keeping = CBORValue.map([CBORPair(.text("keep"), .bool(true))])
        var cases: [(String, TokenChain, Int)] = [("honest", try chain(bad: nil, arguments: .map([])), 3)]
        for bad in 0..<3 {
            cases.append(("link \(bad + 1) fails", try chain(bad: bad, arguments: failing), bad + 1))
            cases.append(("link \(bad + 1) keeps the token", try chain(bad: bad, arguments: keeping), bad + 1))
        }
        let limits = RunLimits.walletDefault.capping(token.token.policy)
        for (name, sample, answers) in cases {
            let request = LinkRunsRequest(chain: sample, links: 0..<3, limits: limits, bytecodeAllowed: true)
            let together = Fixtures.programs.runLinks(request)
            #expect(together.count == answers, Comment(rawValue: name))
            #expect(together == request.runEach(Fixtures.programs.run), Comment(rawValue: name))
            func verdict(_ verify: () throws -> Void) -> String {
                do { try verify(); return "ok" } catch { return "\(error)" }
            }
            let oneExchange = verdict { try TransferRuns.verify(sample, bytecodeAllowed: true, linkRunner: Fixtures.programs.runLinks) }
            let oneByOne = verdict { try TransferRuns.verify(sample, bytecodeAllowed: true, runner: Fixtures.programs.run) }
            #expect(oneExchange == oneByOne, Comment(rawValue: name))
            if answers == 3 && name == "honest" {
                #expect(oneExchange == "ok")
            } else {
                let failedLink = answers
                #expect(oneExchange.contains("transfer \(failedLink) of 3"), Comment(rawValue: "\(name): \(oneExchange)"))
            }
        }
    }

    /// A proof of two hand-signed voucher links blames nobody once its links are re-run.
    @Test func aProofOfHandSignedLinksDoesNotVerify() throws {
        let voucher = TokenChain(token: try Self.token(Self.voucher))
        let a = try voucher.appending(to: Fixtures.keys[1].publicKey, time: Fixtures.now, effects: [], sign: Self.sign)
        let b = try voucher.appending(to: Fixtures.keys[2].publicKey, time: Fixtures.now, effects: [], sign: Self.sign)
        let proof = try #require(FraudProof.between(a, b))
        #expect(try proof.verify() == Fixtures.keys[0].publicKey)  // the signatures alone hold
        #expect { try proof.verify(bytecodeAllowed: false, runner: Fixtures.programs.run) } throws: {
            ($0 as? TokenError)?.kind == "unauthorised_transfer"
        }
    }
}
