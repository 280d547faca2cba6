import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("Addresses: Bech32/Bech32m, Base58Check, EIP-55, BIP49/84/86 examples")
    struct AddressTests {
        struct Bech32File: Decodable {
            struct Invalid: Decodable { let string: String; let reason: String }
            struct Segwit: Decodable { let address: String; let scriptPubKey: String }
            let valid_bech32: [String]
            let valid_bech32m: [String]
            let invalid_bech32: [Invalid]
            let invalid_bech32m: [Invalid]
            let valid_segwit: [Segwit]
            let invalid_segwit_bip350: [Invalid]
            let invalid_segwit_bip173: [Invalid]
        }

        @Test("BIP173/BIP350 valid strings decode with the right variant; invalid ones fail for their stated reason")
        func bech32Strings() throws {
            let file: Bech32File = try Vectors.json("bech32.json")
            for s in file.valid_bech32 {
                #expect(try Bech32.decode(s).variant == .bech32, "\(s)")
            }
            for s in file.valid_bech32m {
                #expect(try Bech32.decode(s).variant == .bech32m, "\(s)")
            }
            for item in file.invalid_bech32 + file.invalid_bech32m {
                do {
                    _ = try Bech32.decode(item.string)
                    Issue.record("accepted \(item.string) (\(item.reason))")
                } catch let error as EncodingError {
                    let expected: Bool
                    switch (item.reason, error) {
                    case ("HRP character out of range", .badCharacter), ("Invalid data character", .badCharacter),
                         ("Invalid character in checksum", .badCharacter):
                        expected = true
                    case ("overall max length exceeded", .badLength), ("Too short checksum", .badLength):
                        expected = true
                    case ("No separator character", .missingSeparator), ("Empty HRP", .missingSeparator), ("empty HRP", .missingSeparator):
                        expected = true
                    case ("checksum calculated with uppercase form of HRP", .badChecksum):
                        expected = true
                    default:
                        expected = false
                    }
                    #expect(expected, "\(item.string.debugDescription): \(item.reason) gave \(error)")
                }
            }
        }

        @Test("BIP350 valid segwit addresses give their scriptPubKey and re-encode")
        func segwitValid() throws {
            let file: Bech32File = try Vectors.json("bech32.json")
            #expect(file.valid_segwit.count == 8)
            for item in file.valid_segwit {
                let hrp = String(item.address.lowercased().prefix { $0 != "1" })
                let (version, program) = try SegwitAddress.decode(item.address, hrp: hrp)
                #expect(Hex.encode(SegwitAddress.scriptPubKey(version: version, program: program)) == item.scriptPubKey)
                #expect(try SegwitAddress.encode(hrp: hrp, version: version, program: program) == item.address.lowercased())
            }
        }

        @Test("BIP173 and BIP350 invalid segwit addresses are rejected for their stated reason")
        func segwitInvalid() throws {
            let file: Bech32File = try Vectors.json("bech32.json")
            for item in file.invalid_segwit_bip350 + file.invalid_segwit_bip173 {
                let hrp = item.string.lowercased().hasPrefix("tb") ? "tb" : "bc"
                do {
                    _ = try SegwitAddress.decode(item.string, hrp: hrp)
                    Issue.record("accepted \(item.string) (\(item.reason))")
                } catch let error as AddressError {
                    let expected: Bool
                    switch (item.reason, error) {
                    case ("Invalid human-readable part", .wrongNetwork), ("Invalid human-readable part", .encoding(.badCharacter)):
                        expected = true
                    case (let r, .encoding(.badChecksum)) where r.hasPrefix("Invalid checksum"):
                        expected = true
                    case ("Invalid character in checksum", .encoding(.badCharacter)), ("Mixed case", .encoding(.mixedCase)):
                        expected = true
                    case (let r, .badProgram) where r.hasPrefix("Invalid witness version") || r.hasPrefix("Invalid program length") || r == "Empty data section":
                        expected = true
                    case ("zero padding of more than 4 bits", .encoding(.badPadding)), ("Non-zero padding in 8-to-5 conversion", .encoding(.badPadding)):
                        expected = true
                    case ("Invalid witness version", .encoding(.badChecksum)):
                        // BC13W508...: version 3 written with a Bech32 (not Bech32m) checksum, so the checksum fails first.
                        expected = true
                    case ("Invalid program length", .encoding(.badChecksum)), ("zero padding of more than 4 bits", .encoding(.badChecksum)):
                        // BIP173-era v1+ examples carry Bech32 checksums, which BIP350 rejects before looking further.
                        expected = true
                    default:
                        expected = false
                    }
                    #expect(expected, "\(item.string): \(item.reason) gave \(error)")
                }
            }
        }

        @Test("EIP-55 examples encode and validate; a flipped case is a checksum error")
        func eip55() throws {
            struct File: Decodable { let all_caps: [String]; let all_lower: [String]; let normal: [String] }
            let file: File = try Vectors.json("eip55.json")
            for address in file.all_caps + file.all_lower + file.normal {
                let bytes = try EthereumAddress.decode(address, requireChecksum: true)
                #expect(EthereumAddress.checksummed(bytes) == address)
            }
            let good = file.normal[0]
            let flipped = String(good.prefix(2)) + good.dropFirst(2).map { c -> String in c.isUppercase ? c.lowercased() : c.uppercased() }.joined()
            #expect(throws: AddressError.encoding(.badChecksum("the EIP-55 mixed-case checksum does not match"))) { try EthereumAddress.decode(flipped) }
            #expect(throws: AddressError.badLength(found: 19, expected: "20 bytes (40 hex digits after 0x)")) { try EthereumAddress.decode(String(good.dropLast(2))) }
            let badChar = try #require(throws: AddressError.self) { try EthereumAddress.decode("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeZ") }
            #expect(badChar == .encoding(.badCharacter(position: 41, character: "\"Z\"", alphabet: "hexadecimal")))
            #expect(throws: AddressError.self) { try EthereumAddress.decode("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed") }
        }

        @Test("BIP49, BIP84 and BIP86 examples from their own test mnemonic")
        func accountExamples() throws {
            struct File: Decodable {
                struct Addr: Decodable { let path: String; let pubkey: String?; let address: String; let wif: String?; let xpub: String?; let xprv: String?; let internal_key: String?; let output_key: String? }
                struct Section: Decodable { let root_xprv: String; let account_path: String; let account_xprv: String; let account_xpub: String; let addresses: [Addr] }
                let mnemonic: String
                let bip49: Section, bip84: Section, bip86: Section
            }
            let file: File = try Vectors.json("bip-account-examples.json")
            let master = try HDNode(seed: Mnemonic(phrase: file.mnemonic).seed())
            let cases: [(File.Section, AddressKind, Coin, ExtendedKeyVersion)] = [
                (file.bip49, .p2shP2wpkh, .bitcoinTestnet, .upub), (file.bip84, .p2wpkh, .bitcoin, .zpub), (file.bip86, .p2tr, .bitcoin, .xpub),
            ]
            for (section, kind, coin, family) in cases {
                #expect(try master.extendedPrivateKey(family) == section.root_xprv)
                #expect(try HDNode.parse(section.root_xprv).family == family)
                let account = try master.derive(section.account_path)
                #expect(try StandardPath.account(kind, coin: coin).description == section.account_path)
                #expect(try account.extendedPrivateKey(family) == section.account_xprv)
                #expect(account.extendedPublicKey(family) == section.account_xpub)
                for a in section.addresses {
                    let node = try master.derive(a.path)
                    #expect(try node.address(kind, coin: coin) == a.address, "\(a.path)")
                    if let pub = a.pubkey { #expect(Hex.encode(node.publicKey.compressed) == pub) }
                    if let wif = a.wif { #expect(try node.privateKey?.wif(coin: coin) == wif) }
                    if let xpub = a.xpub { #expect(node.extendedPublicKey() == xpub) }
                    if let xprv = a.xprv { #expect(try node.extendedPrivateKey() == xprv) }
                    if let internalKey = a.internal_key { #expect(Hex.encode(node.publicKey.xOnly.bytes) == internalKey) }
                    if let outputKey = a.output_key { #expect(Hex.encode(try node.publicKey.xOnly.taprootOutputKey().bytes) == outputKey) }
                    // Account xpub -> public derivation of change/index gives the same address.
                    let relative = try DerivationPath(indexes: Array(try DerivationPath(a.path).indexes.suffix(2)), absolute: false)
                    #expect(try HDNode(extendedKey: section.account_xpub).derive(relative).address(kind, coin: coin) == a.address)
                    #expect(try Address.decode(a.address, coin: coin).payload.count >= 20)
                }
            }
        }

        @Test("Address decoding separates checksum, length, network, case and character errors")
        func decodeErrors() throws {
            let p2pkh = "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"  // key 1's P2PKH address
            #expect(try Address.decode(p2pkh, coin: .bitcoin).type == .p2pkh)
            var chars = Array(p2pkh)
            chars[10] = chars[10] == "a" ? "b" : "a"
            #expect(throws: AddressError.encoding(.badChecksum("the Base58Check checksum does not match"))) { try Address.decode(String(chars), coin: .bitcoin) }
            let badChar = try #require(throws: AddressError.self) { try Address.decode("1BgGZ9tcN4rm9K0zDn7KprQz87SZ26SAMH", coin: .bitcoin) }
            #expect(badChar == .encoding(.badCharacter(position: 14, character: "\"0\"", alphabet: "Base58")))
            #expect(badChar.description.contains("position 14"))
            let network = try #require(throws: AddressError.self) { try Address.decode(p2pkh, coin: .litecoin) }
            guard case .wrongNetwork = network else { Issue.record("expected wrong network, got \(network)"); return }
            #expect(throws: AddressError.self) { try Address.decode("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", coin: .bitcoin) }
            let tbOnMain = try #require(throws: AddressError.self) { try Address.decode("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", coin: .bitcoin) }
            guard case .wrongNetwork = tbOnMain else { Issue.record("expected wrong network, got \(tbOnMain)"); return }
            #expect(throws: AddressError.encoding(.mixedCase)) { try Address.decode("bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", coin: .bitcoin) }
            #expect(throws: AddressError.badLength(found: 19, expected: "a 1-byte version and a 20-byte hash")) {
                try Address.decode(Base58.encodeCheck([0] + [UInt8](repeating: 7, count: 19)), coin: .bitcoin)
            }
            #expect(throws: AddressError.unsupportedKind(.p2wpkh, coin: "Dogecoin")) { try Address.encode(PrivateKey.generate().publicKey, kind: .p2wpkh, coin: .dogecoin) }
            #expect(!Address.isValid("", coin: .bitcoin))
        }

        @Test("Base58 and CashAddr round-trip (property)")
        func roundTrips() throws {
            for n in 0..<200 {
                let bytes = [UInt8](repeating: 0, count: n % 4) + secureRandomBytes(n % 40)
                #expect(try Base58.decode(Base58.encode(bytes)) == bytes)
                #expect(try Base58.decodeCheck(Base58.encodeCheck(bytes)) == bytes)
                let hash = secureRandomBytes(20)
                let cash = CashAddr.encode(prefix: "bitcoincash", type: UInt8(n % 2), hash: hash)
                let decoded = try CashAddr.decode(cash, prefix: "bitcoincash")
                #expect(decoded.type == UInt8(n % 2) && decoded.hash == hash)
                #expect(try CashAddr.decode(String(cash.dropFirst("bitcoincash:".count)).uppercased(), prefix: "bitcoincash").hash == hash)
            }
        }
    }
}
