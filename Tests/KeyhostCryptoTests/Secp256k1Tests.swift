import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("secp256k1 keys and signatures")
    struct Secp256k1Tests {
        struct RFC6979: Decodable {
            struct Sig: Decodable { let d: String; let message: String; let r: String; let s: String }
            struct DER: Decodable { let d: String; let message: String; let der: String }
            struct Nonce: Decodable { let d: String; let message: String; let k0: String }
            let signatures: [Sig]
            let der: [DER]
            let nonces: [Nonce]
        }

        @Test("RFC 6979 ECDSA signatures equal the trezor and bitcoinjs vectors (low-S)")
        func rfc6979Signatures() throws {
            let v: RFC6979 = try Vectors.json("rfc6979-secp256k1.json")
            for item in v.signatures {
                let key = try PrivateKey(bytes: hex(item.d))
                let digest = Hash.sha256(Array(item.message.utf8))
                let sig = try key.sign(digest: digest)
                #expect(Hex.encode(sig.r) == item.r, "r for \(item.message)")
                #expect(Hex.encode(sig.s) == item.s, "s for \(item.message)")
                #expect(sig.isLowS)
                #expect(try key.publicKey.verify(sig, digest: digest))
            }
            for item in v.der {
                let key = try PrivateKey(bytes: hex(item.d))
                let digest = Hash.sha256(Array(item.message.utf8))
                let sig = try key.sign(digest: digest)
                #expect(Hex.encode(sig.der) == item.der)
                #expect(try ECDSASignature(der: hex(item.der)) == sig)
            }
        }

        @Test("RFC 6979 first nonce k0 gives the signature's r (r = x(k0·G) mod n)")
        func rfc6979Nonces() throws {
            let v: RFC6979 = try Vectors.json("rfc6979-secp256k1.json")
            for item in v.nonces {
                let sig = try PrivateKey(bytes: hex(item.d)).sign(digest: Hash.sha256(Array(item.message.utf8)))
                let r = try PrivateKey(bytes: hex(item.k0)).publicKey.compressed.dropFirst()
                // x(kG) is below n for all these vectors, so no reduction is needed.
                #expect(Array(r) == sig.r, "nonce for \(item.message)")
            }
        }

        @Test("BIP340: every row of test-vectors.csv signs and verifies as listed")
        func bip340() throws {
            let rows = try Vectors.text("bip340-test-vectors.csv").split(whereSeparator: \.isNewline).dropFirst()
            #expect(rows.count >= 15)
            for row in rows {
                let f = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                let (secret, publicKey, aux, message, signature, expected) = (f[1], f[2], f[3], hex(f[4]), hex(f[5]), f[6] == "TRUE")
                if !secret.isEmpty {
                    let key = try PrivateKey(bytes: hex(secret))
                    #expect(key.publicKey.xOnly.bytes == hex(publicKey), "row \(f[0]) public key")
                    #expect(try key.signSchnorr(message: message, auxiliaryRandom: hex(aux)) == signature, "row \(f[0]) signature")
                }
                let verified = (try? XOnlyPublicKey(bytes: hex(publicKey)))?.verify(schnorr: signature, message: message) ?? false
                #expect(verified == expected, "row \(f[0]) verification: \(f[7])")
            }
        }

        @Test("BIP341 key-path tweaks match the wallet test vectors")
        func bip341() throws {
            struct File: Decodable {
                struct SPK: Decodable {
                    struct Given: Decodable { let internalPubkey: String }
                    struct Inter: Decodable { let merkleRoot: String?; let tweak: String; let tweakedPubkey: String }
                    struct Expected: Decodable { let bip350Address: String }
                    let given: Given; let intermediary: Inter; let expected: Expected
                }
                struct KPS: Decodable {
                    struct Input: Decodable {
                        struct Given: Decodable { let internalPrivkey: String; let merkleRoot: String?; let hashType: Int }
                        struct Inter: Decodable { let tweakedPrivkey: String; let sigHash: String }
                        struct Expected: Decodable { let witness: [String] }
                        let given: Given; let intermediary: Inter; let expected: Expected
                    }
                    let inputSpending: [Input]
                }
                let scriptPubKey: [SPK]
                let keyPathSpending: [KPS]
            }
            let file: File = try Vectors.json("bip341-wallet-test-vectors.json")
            for item in file.scriptPubKey {
                let internalKey = try XOnlyPublicKey(bytes: hex(item.given.internalPubkey))
                let root = item.intermediary.merkleRoot.map(hex)
                #expect(Hex.encode(try internalKey.taprootTweak(merkleRoot: root)) == item.intermediary.tweak)
                let output = try internalKey.taprootOutputKey(merkleRoot: root)
                #expect(Hex.encode(output.bytes) == item.intermediary.tweakedPubkey)
                #expect(try SegwitAddress.encode(hrp: "bc", version: 1, program: output.bytes) == item.expected.bip350Address)
            }
            for input in file.keyPathSpending.flatMap(\.inputSpending) {
                let tweaked = try PrivateKey(bytes: hex(input.given.internalPrivkey)).taprootTweaked(merkleRoot: input.given.merkleRoot.map(hex))
                #expect(Hex.encode(tweaked.revealedBytes()) == input.intermediary.tweakedPrivkey)
                // The vectors sign with all-zero auxiliary randomness; a non-default hash type is appended as a 65th byte.
                let signature = try tweaked.signSchnorr(message: hex(input.intermediary.sigHash), auxiliaryRandom: [UInt8](repeating: 0, count: 32))
                let suffix = input.given.hashType == 0 ? "" : Hex.encode([UInt8(input.given.hashType)])
                #expect(Hex.encode(signature) + suffix == input.expected.witness[0])
            }
        }

        @Test("Recoverable signatures recover the signer; DER and compact forms round-trip (property)")
        func properties() throws {
            for _ in 0..<64 {
                let key = PrivateKey.generate()
                let digest = secureRandomBytes(32)
                let sig = try key.sign(digest: digest)
                #expect(try key.publicKey.verify(sig, digest: digest))
                #expect(try !key.publicKey.verify(sig, digest: Hash.sha256(digest)))
                #expect(try ECDSASignature(der: sig.der) == sig)
                #expect(try ECDSASignature(compact: sig.compact) == sig)
                let rec = try key.signRecoverable(digest: digest)
                #expect(rec.signature == sig, "recoverable and plain RFC 6979 signatures agree")
                #expect(try rec.recoverPublicKey(digest: digest) == key.publicKey)
                #expect(try RecoverableSignature(rsv: rec.rsv) == rec)
                #expect(try PublicKey(bytes: key.publicKey.uncompressed) == key.publicKey)
                #expect(try PublicKey(bytes: key.publicKey.compressed) == key.publicKey)
                let message = secureRandomBytes(Int.random(in: 0...80))
                let schnorr = try key.signSchnorr(message: message)
                #expect(key.publicKey.xOnly.verify(schnorr: schnorr, message: message))
                #expect(!key.publicKey.xOnly.verify(schnorr: schnorr, message: message + [0]))
                let peer = PrivateKey.generate()
                #expect(try key.sharedSecretX(with: peer.publicKey) == peer.sharedSecretX(with: key.publicKey))
                #expect(try key.sharedSecretX(with: peer.publicKey).revealedBytes()
                        == Array(peer.publicKey.multiplied(by: key.revealedBytes()).compressed.dropFirst()))
            }
        }

        @Test("High-S signatures are detected and normalized")
        func lowS() throws {
            let key = try PrivateKey(bytes: hex("0000000000000000000000000000000000000000000000000000000000000001"))
            let digest = Hash.sha256(Array("Satoshi Nakamoto".utf8))
            let sig = try key.sign(digest: digest)
            // The vector's published high-S form (n - s), from the trezor set.
            let high = try ECDSASignature(compact: sig.r + hex("dbbd3162d46e9f9bef7feb87c16dc13b4f6568a87f4e83f728e2443ba586675c"))
            #expect(!high.isLowS)
            #expect(try !key.publicKey.verify(high, digest: digest))
            #expect(high.normalized() == sig)
        }

        @Test("Bad keys, signatures and digests give specific typed errors")
        func badInput() throws {
            #expect(throws: KeyError.privateKeyLength(31)) { try PrivateKey(bytes: [UInt8](repeating: 1, count: 31)) }
            #expect(throws: KeyError.privateKeyOutOfRange) { try PrivateKey(bytes: [UInt8](repeating: 0, count: 32)) }
            #expect(throws: KeyError.privateKeyOutOfRange) { try PrivateKey(bytes: secp256k1Order) }
            #expect(throws: KeyError.publicKeyLength(32, expected: "33 bytes (compressed, 02/03 prefix) or 65 bytes (uncompressed, 04 prefix)")) {
                try PublicKey(bytes: [UInt8](repeating: 2, count: 32))
            }
            #expect(throws: KeyError.publicKeyPrefix(0x05)) { try PublicKey(bytes: [0x05] + [UInt8](repeating: 1, count: 32)) }
            #expect(throws: KeyError.publicKeyPrefix(0x04)) { try PublicKey(bytes: [0x04] + [UInt8](repeating: 1, count: 32)) }
            // x = 5 has no y on secp256k1 (BIP340 vector 5's public key is likewise off the curve).
            #expect(throws: KeyError.publicKeyNotOnCurve) { try PublicKey(bytes: hex("020000000000000000000000000000000000000000000000000000000000000005")) }
            #expect(throws: KeyError.publicKeyNotOnCurve) { try XOnlyPublicKey(bytes: hex("eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34")) }
            let g = try PrivateKey(bytes: hex("0000000000000000000000000000000000000000000000000000000000000001")).publicKey
            var offCurve = g.uncompressed
            offCurve[64] ^= 1
            #expect(throws: KeyError.publicKeyNotOnCurve) { try PublicKey(bytes: offCurve) }
            let key = PrivateKey.generate()
            #expect(throws: SignatureError.digestLength(31)) { try key.sign(digest: [UInt8](repeating: 0, count: 31)) }
            #expect(throws: SignatureError.digestLength(33)) { try key.signRecoverable(digest: [UInt8](repeating: 0, count: 33)) }
            #expect(throws: SignatureError.signatureLength(63, expected: 64)) { try ECDSASignature(compact: [UInt8](repeating: 1, count: 63)) }
            #expect(throws: SignatureError.valueOutOfRange) { try ECDSASignature(compact: [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 1, count: 32)) }
            #expect(throws: SignatureError.valueOutOfRange) { try ECDSASignature(compact: secp256k1Order + [UInt8](repeating: 1, count: 32)) }
            #expect(throws: SignatureError.invalidDER) { try ECDSASignature(der: [0x30, 0x02, 0x02, 0x00]) }
            #expect(throws: SignatureError.invalidDER) { try ECDSASignature(der: []) }
            #expect(throws: SignatureError.recoveryID(31)) { try RecoverableSignature(rsv: [UInt8](repeating: 1, count: 64) + [31]) }
            #expect(throws: SignatureError.auxiliaryRandomLength(31)) { try key.signSchnorr(message: [], auxiliaryRandom: [UInt8](repeating: 0, count: 31)) }
            for error in [KeyError.privateKeyOutOfRange, .publicKeyNotOnCurve, .publicKeyPrefix(5)] as [any CustomStringConvertible] {
                #expect(error.description.count > 30)
            }
        }

        @Test("Private keys never appear in descriptions")
        func redaction() throws {
            let key = try PrivateKey(bytes: hex("e8f32e723decf4051aefac8e2c93c9c5b214313817cdb01a1494b917c8436b35"))
            for text in [key.description, key.debugDescription, String(describing: key), String(reflecting: key), "\(key)",
                         key.secret.description, String(reflecting: key.secret)] {
                #expect(!text.contains("e8f32e72"), "leaked: \(text)")
                #expect(!text.lowercased().contains("e8f3"))
            }
            let wif = try key.wif()
            #expect(try PrivateKey.fromWIF(wif).key == key)
            #expect(throws: KeyError.self) { try PrivateKey.fromWIF(wif, coin: .litecoin) }
        }
    }
}
