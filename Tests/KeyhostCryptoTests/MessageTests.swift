import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("Signed messages")
    struct MessageTests {
        @Test("Ethereum personal_sign signs and recovers (property)")
        func ethereum() throws {
            for i in 0..<20 {
                let key = PrivateKey.generate()
                let message = Array("hello \(i) ✓".utf8)
                let signature = try EthereumMessage.sign(message, with: key)
                #expect(signature.rsv.count == 65 && [27, 28].contains(signature.rsv[64]))
                #expect(try EthereumMessage.recoverAddress(message, signature: signature.rsv) == EthereumAddress.address(of: key.publicKey))
                #expect(try EthereumMessage.recoverAddress(message + [0x21], signature: signature.rsv) != EthereumAddress.address(of: key.publicKey))
            }
            #expect(throws: SignatureError.signatureLength(64, expected: 65)) { try EthereumMessage.recoverAddress([], signature: [UInt8](repeating: 1, count: 64)) }
        }

        @Test("Bitcoin signed messages verify for P2PKH, P2SH-P2WPKH and P2WPKH, and fail for other addresses")
        func bitcoin() throws {
            let key = PrivateKey.generate()
            let other = PrivateKey.generate()
            let message = Array("keyhost message".utf8)
            for kind in [AddressKind.p2pkh, .p2shP2wpkh, .p2wpkh] {
                let address = try Address.encode(key.publicKey, kind: kind, coin: .bitcoin)
                let signature = try BitcoinMessage.sign(message, with: key, kind: kind)
                let header = Int(try #require(Data(base64Encoded: signature))[0])
                #expect(header >= [.p2pkh: 31, .p2shP2wpkh: 35, .p2wpkh: 39][kind]!)
                #expect(try BitcoinMessage.verify(message, signature: signature, address: address))
                #expect(try !BitcoinMessage.verify(message + [1], signature: signature, address: address))
                #expect(try !BitcoinMessage.verify(message, signature: signature, address: Address.encode(other.publicKey, kind: kind, coin: .bitcoin)))
                let legacy = try BitcoinMessage.sign(message, with: key, kind: kind, bip137Headers: false)
                #expect(try BitcoinMessage.verify(message, signature: legacy, address: address))
            }
            #expect(throws: SignatureError.base64) { try BitcoinMessage.verify(message, signature: "not base64!", address: "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH") }
            #expect(throws: AddressError.unsupportedKind(.p2tr, coin: "Bitcoin signed messages (legacy format)")) { try BitcoinMessage.sign(message, with: key, kind: .p2tr) }
        }

        @Test("Bitcoin message hash has the documented layout")
        func bitcoinHash() {
            let message = Array("abc".utf8)
            let expected = Hash.sha256d([24] + Array("Bitcoin Signed Message:\n".utf8) + [3] + message)
            #expect(BitcoinMessage.hash(message) == expected)
            #expect(BitcoinMessage.varint(0xfc) == [0xfc] && BitcoinMessage.varint(0xfd) == [0xfd, 0xfd, 0x00] && BitcoinMessage.varint(0x10000) == [0xfe, 0, 0, 1, 0])
        }

        @Test("An uncompressed WIF key stays uncompressed: WIF, P2PKH address and signed message agree with btclib")
        func uncompressedWIF() throws {
            let wif = "5JJEwxKq7P8tf1USbspR3vofkB6Fv8Ns58PM6RYntQHqzUZSjwa"
            let (key, compressed) = try PrivateKey.fromWIF(wif)
            #expect(!compressed && !key.isCompressed && !key.publicKey.isCompressed)
            #expect(try key.wif() == wif)
            let address = try Address.encode(key.publicKey, kind: .p2pkh, coin: .bitcoin)
            #expect(address == "13nBNZJSJbw2nLyqCoZMY5PEKcf75W5o7N")
            #expect(try Address.encode(PublicKey(bytes: key.publicKey.uncompressed), kind: .p2pkh, coin: .bitcoin) == address)
            for kind in [AddressKind.p2wpkh, .p2shP2wpkh, .p2tr] {
                #expect(throws: AddressError.uncompressedKey(kind)) { try Address.encode(key.publicKey, kind: kind, coin: .bitcoin) }
                #expect(throws: AddressError.uncompressedKey(kind)) { try BitcoinMessage.sign([1], with: key, kind: kind) }
            }
            let message = Array("keyhost uncompressed".utf8)
            let signature = try BitcoinMessage.sign(message, with: key)
            let header = try #require(Data(base64Encoded: signature)).first!
            #expect((27...30).contains(header), "uncompressed P2PKH header")
            #expect(try BitcoinMessage.verify(message, signature: signature, address: address))
            struct Answer: Decodable { let compressed: Bool; let address: String; let signature: String; let verifies: Bool }
            let oracle = try JSONDecoder().decode(Answer.self, from: Oracle.run("uncompressed_wif_oracle.py",
                                                                                [wif, Hex.encode(message), signature, address]))
            #expect(oracle.compressed == false)
            #expect(oracle.address == address)
            #expect(oracle.signature == signature)
            #expect(oracle.verifies)
        }
    }
}
