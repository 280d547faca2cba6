import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import KeyhostWorkerProcess

/// Real chains signed with real keys: an issuer, holders, and deposits to the issuer's deposit key.
enum Fixtures {
    static let issuer = try! PrivateKey(bytes: Array(repeating: 0x51, count: 32))
    static let otherIssuer = try! PrivateKey(bytes: Array(repeating: 0x52, count: 32))
    static let keys = (0..<6).map { try! PrivateKey(bytes: Array(repeating: UInt8(0x61 + $0), count: 32)) }
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    /// The time links are signed with unless a test names one: fixed for the whole run, so two chains of one
    /// token built a moment apart share their common links byte for byte. (Read from the clock at each call, a
    /// second that ticked between building them on a loaded machine made the chains part at link 0, signed by
    /// keys[0], and a test expecting keys[1] as the double spender failed.)
    static let linkTime = now - 60
    /// The built keyhost, whose worker re-runs programs for the ledgers under test.
    static let worker = try! WorkerProgram.path()
    static let programs = WorkerPool(executable: worker)
    /// Hands the token on when asked to, and emits nothing: a link's receipt is then that of a run
    /// with no effects (`pass`).
    static let transferring = TokenProgram(kind: .luaSource, code: Array("local t = ... if t.transfer_to then t.transfer(t.transfer_to) end".utf8))

    static func token(id: [UInt8]? = nil, value: UInt64 = 100, unit: String = "EUR-cent", issuer: PrivateKey = issuer,
                      expires: Int64? = nil, policy: TokenPolicy = TokenPolicy()) throws -> SignedToken {
        let token = Token(id: id ?? randomID(), issuer: issuer.publicKey.xOnly, value: value, unit: unit, expires: expires,
                          program: transferring, holder: keys[0].publicKey, policy: policy)
        return try SignedToken.issue(token, issuerKey: issuer)
    }

    static func randomID() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    /// `chain` handed on by the key at `from` (an index into `keys`) to `to`.
    static func pass(_ chain: TokenChain, from: Int, to next: PublicKey, time: Int64 = linkTime) throws -> TokenChain {
        try chain.appending(to: next, time: time, effects: []) { try ProtocolSignature.sign($0, with: keys[from]) }
    }

    static func depositKey(_ issuer: PrivateKey = issuer) -> PublicKey { TokenChain.depositKey(issuer: issuer.publicKey.xOnly) }

    /// keys[0] → keys[1] → keys[via] → deposit. Different `via` give chains of one token that part
    /// at link 1, signed both times by keys[1].
    /// `times`: the three links' times, when they differ.
    static func deposit(_ token: SignedToken, via: Int = 2, time: Int64 = linkTime, times: [Int64]? = nil) throws -> TokenChain {
        let times = times ?? [time, time, time]
        var chain = try pass(TokenChain(token: token), from: 0, to: keys[1].publicKey, time: times[0])
        chain = try pass(chain, from: 1, to: keys[via].publicKey, time: times[1])
        return try pass(chain, from: via, to: depositKey(PrivateKey(bytes: issuerSecret(of: token))), time: times[2])
    }

    private static func issuerSecret(of token: SignedToken) -> [UInt8] {
        token.token.issuer == otherIssuer.publicKey.xOnly ? Array(repeating: 0x52, count: 32) : Array(repeating: 0x51, count: 32)
    }
}
