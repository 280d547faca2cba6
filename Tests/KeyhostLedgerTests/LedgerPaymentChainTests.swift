import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Testing

/// The ledger against chains made the way a wallet makes them (TokenChain.appending): a deposit
/// is recorded once, a retry gets the same answer, and a fork is a double spend whose proof names
/// the key that signed twice. A bare token is not a deposit.
@Suite struct LedgerPaymentChainTests {
    let issuer = PrivateKey.generate()
    let payer = PrivateKey.generate()

    func token() throws -> SignedToken {
        try SignedToken.issue(
            Token(id: secureRandomBytes(32), issuer: issuer.publicKey.xOnly, value: 100, unit: "EUR-cent",
                  program: TokenProgram(kind: .luaSource, code: Array("local t = ... t.transfer(t.transfer_to)".utf8)), holder: payer.publicKey),
            issuerKey: issuer)
    }

    func sign(_ key: PrivateKey) -> ([UInt8]) throws -> [UInt8] { { try key.sign(digest: $0).normalized().compact } }

    func ledger() throws -> (TokenLedger, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        return (try TokenLedger(store: try SQLiteLedgerStore(path: path), issuers: [issuer.publicKey.xOnly], programs: Fixtures.programs.run), path)
    }

    @Test func depositOnceThenDoubleSpendWithProof() async throws {
        let (ledger, path) = try ledger()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let signed = try token()
        let now = Int64(Date().timeIntervalSince1970)
        let payeeB = PrivateKey.generate(), payeeC = PrivateKey.generate()
        let deposit = TokenChain.depositKey(issuer: issuer.publicKey.xOnly)
        let viaB = try TokenChain(token: signed).appending(to: payeeB.publicKey, time: now, effects: [], sign: sign(payer))
            .appending(to: deposit, time: now, effects: [], sign: sign(payeeB))
        let viaC = try TokenChain(token: signed).appending(to: payeeC.publicKey, time: now, effects: [], sign: sign(payer))
            .appending(to: deposit, time: now, effects: [], sign: sign(payeeC))

        #expect(try await ledger.deposit([viaB]).map(\.name) == ["accepted"])
        #expect(try await ledger.deposit([viaB]).map(\.name) == ["already_deposited"])
        let second = try await ledger.deposit([viaC])
        #expect(second.map(\.name) == ["double_spend"])
        let proof = try #require(second.first?.proof)
        #expect(try proof.verify() == payer.publicKey)
    }

    @Test func aBareTokenIsNotADeposit() async throws {
        let (ledger, path) = try ledger()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        await #expect { try await ledger.deposit([TokenChain(token: try token())]) } throws: { ($0 as? LedgerError)?.kind == "not_deposit" }
    }
}
