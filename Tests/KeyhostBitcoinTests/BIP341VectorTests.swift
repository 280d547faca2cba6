import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// BIP341's wallet test vectors (bip-0341/wallet-test-vectors.json, keyPathSpending): the signature hash of
/// every input under its hash type (SINGLE, NONE, ANYONECANPAY included), the key tweak, and the signature.
@Suite("BIP341 wallet vectors")
struct BIP341VectorTests {
    struct File: Decodable {
        struct Spending: Decodable {
            struct Given: Decodable {
                struct UTXO: Decodable { let scriptPubKey: String; let amountSats: UInt64 }
                let rawUnsignedTx: String
                let utxosSpent: [UTXO]
            }
            struct Input: Decodable {
                struct Given: Decodable { let txinIndex: Int; let internalPrivkey: String; let merkleRoot: String?; let hashType: UInt32 }
                struct Intermediary: Decodable { let tweakedPrivkey: String; let sigHash: String }
                struct Expected: Decodable { let witness: [String] }
                let given: Given
                let intermediary: Intermediary
                let expected: Expected
            }
            struct Auxiliary: Decodable { let fullySignedTx: String }
            let given: Given
            let inputSpending: [Input]
            let auxiliary: Auxiliary
        }
        let keyPathSpending: [Spending]
    }

    @Test("signature hashes, tweaked keys and signatures (aux_rand zero) match; the signed transaction re-serializes")
    func keyPathSpending() throws {
        let file = try JSONDecoder().decode(File.self, from: Vectors.data("bip341-wallet-test-vectors.json"))
        var checked = 0
        for spending in file.keyPathSpending {
            let tx = try BitcoinTransaction.parse(hex(spending.given.rawUnsignedTx))
            let spent = spending.given.utxosSpent.map { TxOutput(value: $0.amountSats, scriptPubKey: hex($0.scriptPubKey)) }
            let cache = SighashCache(transaction: tx, spentOutputs: spent)
            for input in spending.inputSpending {
                let type = SighashType(rawValue: input.given.hashType)
                let digest = try cache.taproot(input: input.given.txinIndex, type: type)
                #expect(hex(digest) == input.intermediary.sigHash, "input \(input.given.txinIndex) type \(type)")
                let key = try PrivateKey(bytes: hex(input.given.internalPrivkey))
                let tweaked = try key.taprootTweaked(merkleRoot: input.given.merkleRoot.map { hex($0) })
                #expect(hex(tweaked.revealedBytes()) == input.intermediary.tweakedPrivkey)
                var signature = try tweaked.signSchnorr(message: digest, auxiliaryRandom: [UInt8](repeating: 0, count: 32))
                if type != .default { signature.append(UInt8(type.rawValue)) }
                #expect([hex(signature)] == input.expected.witness)
                checked += 1
            }
            #expect(hex(try BitcoinTransaction.parse(hex(spending.auxiliary.fullySignedTx)).serialized()) == spending.auxiliary.fullySignedTx)
        }
        #expect(checked == 7)
    }
}
