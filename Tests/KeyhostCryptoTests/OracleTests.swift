import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    /// Compares keyhost with independent Python implementations (bip-utils, python-mnemonic, coincurve,
    /// eth-account, btclib) over several hundred reproducible random seeds and paths.
    @Suite("Python oracles")
    struct OracleTests {
        struct Case: Decodable {
            let entropy, mnemonic, passphrase, seed, path, xprv, xpub, zpub, tprv, fingerprint, parent_fingerprint: String
            let private_key, public_key, public_key_uncompressed, wif: String
            let addresses: [String: [String: String]]
            let chain: UInt32
            let chain_addresses: [String]
            let digest, ecdsa_der, recoverable, schnorr_message, schnorr_aux, schnorr_signature, xonly: String
            let peer_public_key, ecdh_x, eth_message, eth_signature: String
        }

        struct Output: Decodable { let cases: [Case] }

        static let caseCount = 300

        @Test("keyhost equals bip-utils/coincurve/eth-account on 300 random seeds, paths and messages")
        func compareWithOracle() throws {
            let output = try JSONDecoder().decode(Output.self, from: Oracle.run("hd_oracle.py", [String(Self.caseCount)]))
            #expect(output.cases.count == Self.caseCount)
            var mismatches = 0
            for (n, c) in output.cases.enumerated() {
                let mnemonic = try Mnemonic(entropy: hex(c.entropy))
                #expect(mnemonic.phrase == c.mnemonic, "case \(n) mnemonic")
                let seed = try Mnemonic(phrase: c.mnemonic).seed(passphrase: c.passphrase)
                #expect(Hex.encode(seed.revealedBytes()) == c.seed, "case \(n) seed (passphrase \(c.passphrase.debugDescription))")
                let node = try HDNode(seed: seed).derive(c.path)
                #expect(try node.extendedPrivateKey() == c.xprv, "case \(n) \(c.path) xprv")
                #expect(node.extendedPublicKey() == c.xpub, "case \(n) \(c.path) xpub")
                #expect(node.extendedPublicKey(.zpub) == c.zpub, "case \(n) zpub")
                #expect(try node.extendedPrivateKey(.tpub) == c.tprv, "case \(n) tprv")
                #expect(String(format: "%08x", node.fingerprint) == c.fingerprint)
                #expect(String(format: "%08x", node.parentFingerprint) == c.parent_fingerprint)
                let key = try #require(node.privateKey)
                #expect(Hex.encode(key.revealedBytes()) == c.private_key)
                #expect(Hex.encode(node.publicKey.compressed) == c.public_key)
                #expect(Hex.encode(node.publicKey.uncompressed) == c.public_key_uncompressed)
                #expect(try key.wif() == c.wif)
                for (symbol, kinds) in c.addresses {
                    let coin = try #require(Coin.named(symbol), "coin \(symbol)")
                    for (kindName, expected) in kinds {
                        let kind = try #require(AddressKind(name: kindName))
                        let actual = try node.address(kind, coin: coin)
                        if actual != expected { mismatches += 1 }
                        #expect(actual == expected, "case \(n) \(symbol) \(kindName)")
                        #expect(try Address.decode(expected, coin: coin).payload.count >= 20)
                    }
                }
                // Public derivation from the xpub, in one batch call.
                let batch = try HDNode(extendedKey: c.xpub).addresses(.p2wpkh, coin: .bitcoin, chain: c.chain, from: 0, count: c.chain_addresses.count)
                #expect(batch == c.chain_addresses, "case \(n) batch")
                // Deterministic signatures must be identical to coincurve's.
                let sig = try key.sign(digest: hex(c.digest))
                #expect(Hex.encode(sig.der) == c.ecdsa_der, "case \(n) ECDSA")
                let rec = try key.signRecoverable(digest: hex(c.digest))
                #expect(Hex.encode(rec.r + rec.s + [UInt8(rec.recoveryID)]) == c.recoverable, "case \(n) recoverable")
                #expect(Hex.encode(try key.signSchnorr(message: hex(c.schnorr_message), auxiliaryRandom: hex(c.schnorr_aux))) == c.schnorr_signature)
                #expect(Hex.encode(node.publicKey.xOnly.bytes) == c.xonly)
                #expect(Hex.encode(try key.sharedSecretX(with: PublicKey(bytes: hex(c.peer_public_key))).revealedBytes()) == c.ecdh_x)
                let eth = try EthereumMessage.sign(Array(c.eth_message.utf8), with: key)
                #expect(Hex.encode(eth.rsv) == c.eth_signature, "case \(n) personal_sign")
            }
            #expect(mismatches == 0)
        }

        @Test("Signatures keyhost makes verify in coincurve, eth-account and btclib")
        func oracleVerifiesKeyhost() throws {
            var ecdsa: [[String: String]] = [], recoverable: [[String: Any]] = [], schnorr: [[String: String]] = []
            var ethereum: [[String: String]] = [], bitcoin: [[String: String]] = []
            for i in 0..<200 {
                let key = PrivateKey.generate()
                let digest = secureRandomBytes(32)
                let pub = Hex.encode(key.publicKey.compressed)
                ecdsa.append(["public_key": pub, "digest": Hex.encode(digest), "der": Hex.encode(try key.sign(digest: digest).der)])
                let rec = try key.signRecoverable(digest: digest)
                recoverable.append(["public_key": pub, "digest": Hex.encode(digest), "rs": Hex.encode(rec.r + rec.s), "recovery_id": rec.recoveryID])
                let message = secureRandomBytes(i % 70)
                schnorr.append(["xonly": Hex.encode(key.publicKey.xOnly.bytes), "message": Hex.encode(message),
                                "signature": Hex.encode(try key.signSchnorr(message: message))])
                let text = "keyhost says \(i) \u{1F511}"
                ethereum.append(["address": EthereumAddress.address(of: key.publicKey), "message": text,
                                 "signature": Hex.encode(try EthereumMessage.sign(Array(text.utf8), with: key).rsv)])
                let kind = [AddressKind.p2pkh, .p2shP2wpkh, .p2wpkh][i % 3]
                bitcoin.append(["address": try Address.encode(key.publicKey, kind: kind, coin: .bitcoin), "message": text,
                                "signature": try BitcoinMessage.sign(Array(text.utf8), with: key, kind: kind)])
            }
            let payload: [String: Any] = ["ecdsa": ecdsa, "recoverable": recoverable, "schnorr": schnorr, "ethereum": ethereum, "bitcoin_message": bitcoin]
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-signatures-\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: payload).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let report = try JSONSerialization.jsonObject(with: Oracle.run("verify_keyhost.py", [file.path])) as? [String: Any]
            #expect(report?["checked"] as? Int == 1000)
            #expect((report?["failures"] as? [Any])?.isEmpty == true, "oracle rejected: \(String(describing: report?["failures"]))")
        }
    }
}
