import Foundation
import KeyhostCrypto
import KeyhostTestSupport
import Testing
@testable import KeyhostTokens

/// Transfer chains and fraud proofs, checked against cbor2 + coincurve (Tests/Oracles/chain_oracle.py)
/// in both directions.
@Suite struct ChainTests {
    static let issuer = try! PrivateKey(bytes: Array(repeating: 0x51, count: 32))
    static let keys = (0..<4).map { try! PrivateKey(bytes: Array(repeating: UInt8(0x61 + $0), count: 32)) }

    static func token() throws -> SignedToken {
        let token = Token(id: Array(repeating: 0xAB, count: 32), issuer: issuer.publicKey.xOnly, value: 100, unit: "EUR-cent",
                          program: TokenProgram(kind: .luaSource, code: Array("return".utf8)), holder: keys[0].publicKey)
        return try SignedToken.issue(token, issuerKey: issuer)
    }

    static func pass(_ chain: TokenChain, from index: Int, to next: PublicKey, time: Int64 = 1_900_000_000) throws -> TokenChain {
        try chain.appending(to: next, time: time, receipt: Array(repeating: UInt8(index), count: 32)) {
            try ProtocolSignature.sign($0, with: keys[index])
        }
    }

    @Test func keyhostChainsVerifyInPython() throws {
        var chain = TokenChain(token: try Self.token())
        for i in 0..<3 { chain = try Self.pass(chain, from: i, to: Self.keys[i + 1].publicKey) }
        try chain.verify()
        #expect(chain.currentHolder == Self.keys[3].publicKey)
        #expect(try TokenChain.chains(in: Array(chain.armored.utf8)) == [chain])
        let answer = PythonOracle.lines(try PythonOracle.run("chain_oracle.py", ["verify"], input: Data((chain.armored + "\n").utf8)))
        #expect(answer == ["ok \(Hex.encode(Self.keys[3].publicKey.compressed))"])
    }

    /// A chain, its token and its links keep their encodings, assembled from the parts' own (not
    /// by encoding the whole value): they must be the bytes cbor2 wrote, and what encoding the
    /// value gives.
    @Test func storedEncodingsAreTheCanonicalOnes() throws {
        let token = TokenArmor.armor(try Self.token())
        let made = PythonOracle.lines(try PythonOracle.run("chain_oracle.py", ["make", token] + Self.keys.map { Hex.encode($0.revealedBytes()) }))
        let line = Array(made[0].utf8)
        let python = try ProtocolSignature.unarmor(line, prefix: TokenChain.armorPrefix, source: "oracle", limit: TokenChain.maxEncodedBytes)[0]
        let chain = try TokenChain.chains(in: line)[0]
        #expect(chain.encoded == python)
        #expect(chain.hash == Hash.sha256(python))
        let withArguments = try Self.pass(TokenChain(token: chain.token), from: 0, to: Self.keys[1].publicKey)
        let argued = try TokenChain(token: chain.token).appending(
            to: Self.keys[1].publicKey, time: -5, arguments: .map([CBORPair(.text("zz"), .bytes(Array(repeating: 7, count: 300))), CBORPair(.text("a"), .int(-1))]),
            receipt: Array(repeating: 9, count: 32)) { try ProtocolSignature.sign($0, with: Self.keys[0]) }
        for sample in [chain, withArguments, argued, TokenChain(token: chain.token)] {
            #expect(sample.encoded == CBOREncoder.encode(sample.cbor))
            #expect(sample.token.encoded == CBOREncoder.encode(.map([CBORPair(.text("token"), sample.token.token.cbor), CBORPair(.text("sig"), .bytes(sample.token.signature))])))
            for link in sample.transfers {
                #expect(link.encoded == CBOREncoder.encode(link.envelope))
                #expect(link.hash == Hash.sha256(CBOREncoder.encode(link.envelope)))
                #expect(link.digest == Hash.tagged(Transfer.tag, CBOREncoder.encode(link.body)))
            }
            #expect(try TokenChain(encoded: sample.encoded).encoded == sample.encoded)
        }
    }

    @Test func pythonChainsVerifyInKeyhostAndBadOnesAreRefused() throws {
        let token = TokenArmor.armor(try Self.token())
        let good = PythonOracle.lines(try PythonOracle.run("chain_oracle.py", ["make", token] + Self.keys.map { Hex.encode($0.revealedBytes()) }))
        let chain = try TokenChain.chains(in: Array(good[0].utf8))[0]
        try chain.verify()
        #expect(chain.transfers.count == 3 && chain.currentHolder == Self.keys[3].publicKey)
        // keys[1] signing where keys[0] holds the token: the signer is wrong.
        let wrongSigner = PythonOracle.lines(try PythonOracle.run("chain_oracle.py", ["make", token] + Self.keys[1...].map { Hex.encode($0.revealedBytes()) }))
        #expect { try TokenChain.chains(in: Array(wrongSigner[0].utf8))[0].verify() } throws: {
            ($0 as? TokenError)?.message.contains("is not signed by the holder") == true
        }
        // A link dropped: the next one no longer follows.
        let skipped = TokenChain(token: chain.token, transfers: [chain.transfers[0], chain.transfers[2]])
        #expect { try skipped.verify() } throws: { ($0 as? TokenError)?.kind == "chain" }
        // Replayed onto another token of the same holder: refused.
        var other = try Self.token().token
        other.id = Array(repeating: 0xCD, count: 32)
        let replayed = TokenChain(token: try SignedToken.issue(other, issuerKey: Self.issuer), transfers: chain.transfers)
        #expect { try replayed.verify() } throws: { ($0 as? TokenError)?.message.contains("another token") == true }
    }

    /// One holder hands the same token to two keys: the proof names that holder, in keyhost and in Python.
    @Test func doubleSpendingGivesAProofNamingTheKey() throws {
        let start = try Self.pass(TokenChain(token: try Self.token()), from: 0, to: Self.keys[1].publicKey)
        let first = try Self.pass(start, from: 1, to: Self.keys[2].publicKey)
        let second = try Self.pass(start, from: 1, to: Self.keys[3].publicKey, time: 1_900_000_100)
        let proof = try #require(FraudProof.between(first, second))
        #expect(try proof.verify() == Self.keys[1].publicKey)
        #expect(proof.common.count == 1)
        #expect(try FraudProof(armored: Array(proof.armored.utf8)) == proof)
        let python = PythonOracle.lines(try PythonOracle.run("chain_oracle.py", ["proof"], input: Data(proof.armored.utf8)))
        #expect(python == ["ok \(Hex.encode(Self.keys[1].publicKey.compressed))"])
        // The same chain twice, or a chain and its extension, prove nothing.
        #expect(FraudProof.between(first, first) == nil)
        #expect(FraudProof.between(start, first) == nil)
        // A proof whose second transfer was altered does not verify.
        let bad = FraudProof(token: proof.token, common: proof.common, a: proof.a,
                             b: Transfer(tokenID: proof.b.tokenID, index: proof.b.index, previous: proof.b.previous, to: Self.keys[0].publicKey,
                                         time: proof.b.time, receipt: proof.b.receipt, signature: proof.b.signature))
        #expect(throws: TokenError.self) { try bad.verify() }
    }

    @Test func depositsGoToTheIssuersKeyAndOnlyAtTheEnd() throws {
        let deposit = TokenChain.depositKey(issuer: Self.issuer.publicKey.xOnly)
        let held = try Self.pass(TokenChain(token: try Self.token()), from: 0, to: Self.keys[1].publicKey)
        #expect(!held.isDeposit)
        let deposited = try held.appending(to: deposit, time: 1, receipt: Array(repeating: 9, count: 32)) { try ProtocolSignature.sign($0, with: Self.keys[1]) }
        #expect(deposited.isDeposit)
    }

    @Test func requestsAndPaymentsRoundTrip() throws {
        let payee = Self.keys[3]
        let request = try PaymentRequest(amount: 300, unit: "EUR-cent", issuers: [Self.issuer.publicKey.xOnly],
                                         keys: [Self.keys[1].publicKey, Self.keys[2].publicKey], expires: 2_000_000_000,
                                         payee: payee.publicKey, memo: "coffee").signed { try ProtocolSignature.sign($0, with: payee) }
        try request.validate()
        let parsed = try PaymentRequest(armored: Array(request.armored.utf8))
        #expect(parsed == request)
        let forged = PaymentRequest(amount: 3000, unit: request.unit, issuers: request.issuers, keys: request.keys, expires: request.expires,
                                    payee: request.payee, memo: request.memo, signature: request.signature)
        #expect { try forged.validate() } throws: { ($0 as? TokenError)?.kind == "signature" }
        let chain = try Self.pass(TokenChain(token: try Self.token()), from: 0, to: Self.keys[1].publicKey)
        let payment = Payment(requestID: request.id, chains: [chain])
        #expect(try Payment(armored: Array(payment.armored.utf8)) == payment)
    }
}
