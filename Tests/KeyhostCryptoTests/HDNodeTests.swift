import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("BIP32 extended keys and derivation paths")
    struct HDNodeTests {
        struct File: Decodable {
            struct Chain: Decodable { let path: String; let xpub: String; let xprv: String }
            struct Valid: Decodable { let vector: Int; let seed: String; let chains: [Chain] }
            struct Invalid: Decodable { let key: String; let reason: String }
            let valid: [Valid]
            let invalid: [Invalid]
        }

        @Test("BIP32 test vectors 1-4: every chain's xprv and xpub")
        func vectors() throws {
            let file: File = try Vectors.json("bip32.json")
            for v in file.valid {
                let master = try HDNode(seed: hex(v.seed))
                for chain in v.chains {
                    let node = try master.derive(chain.path)
                    #expect(try node.extendedPrivateKey() == chain.xprv, "vector \(v.vector) \(chain.path) xprv")
                    #expect(node.extendedPublicKey() == chain.xpub, "vector \(v.vector) \(chain.path) xpub")
                    // parse(serialize(x)) == x, private and public
                    let (parsed, family) = try HDNode.parse(chain.xprv)
                    #expect(family == .xpub)
                    #expect(try parsed.extendedPrivateKey() == chain.xprv)
                    #expect(try HDNode(extendedKey: chain.xpub).extendedPublicKey() == chain.xpub)
                    #expect(parsed.depth == node.depth && parsed.parentFingerprint == node.parentFingerprint && parsed.childNumber == node.childNumber)
                }
            }
        }

        @Test("BIP32 test vector 5: each invalid key is rejected with the matching error")
        func vector5() throws {
            let file: File = try Vectors.json("bip32.json")
            #expect(file.invalid.count == 16)
            for item in file.invalid {
                do {
                    _ = try HDNode.parse(item.key)
                    Issue.record("accepted invalid key (\(item.reason))")
                } catch let error as ExtendedKeyError {
                    let ok: Bool
                    switch (item.reason, error) {
                    case ("pubkey version / prvkey mismatch", .versionKeyMismatch(_, "private")),
                         ("prvkey version / pubkey mismatch", .versionKeyMismatch(_, "public")),
                         ("invalid pubkey prefix 04", .invalidKeyPrefix(4)), ("invalid prvkey prefix 04", .invalidKeyPrefix(4)),
                         ("invalid pubkey prefix 01", .invalidKeyPrefix(1)), ("invalid prvkey prefix 01", .invalidKeyPrefix(1)),
                         ("zero depth with non-zero parent fingerprint", .zeroDepthWithParent),
                         ("zero depth with non-zero index", .zeroDepthWithIndex),
                         ("unknown extended key version", .unknownVersion),
                         ("private key 0 not in 1..n-1", .invalidPrivateKey), ("private key n not in 1..n-1", .invalidPrivateKey),
                         ("invalid checksum", .encoding(.badChecksum)):
                        ok = true
                    case (let reason, .invalidPublicKey) where reason.hasPrefix("invalid pubkey 02"):
                        ok = true
                    default:
                        ok = false
                    }
                    #expect(ok, "\(item.reason) gave \(error)")
                    #expect(error.description.hasPrefix("invalid extended key"))
                }
            }
        }

        @Test("xprv -> xpub -> derive equals derive -> xpub, and public derivation matches private (property)")
        func publicDerivation() throws {
            for _ in 0..<25 {
                let master = try HDNode(seed: secureRandomBytes(64))
                let account = try master.derive("m/84'/0'/\(Int.random(in: 0..<5))'")
                let relative = try DerivationPath("\(Int.random(in: 0...1))/\(UInt32.random(in: 0..<DerivationPath.hardenedOffset))")
                let viaPrivate = try account.derive(relative).neutered()
                let viaPublic = try HDNode(extendedKey: account.extendedPublicKey()).derive(relative)
                #expect(viaPrivate.extendedPublicKey() == viaPublic.extendedPublicKey())
                #expect(try viaPrivate.address(.p2wpkh) == viaPublic.address(.p2wpkh))
                #expect(viaPublic.parentFingerprint == (try account.derive(child: relative.indexes[0])).fingerprint)
            }
        }

        @Test("SLIP-132 families serialize and parse back (zpub, tprv, ...)")
        func families() throws {
            let node = try HDNode(seed: hex("000102030405060708090a0b0c0d0e0f")).derive("m/0'/1")
            for family in ExtendedKeyVersion.all {
                let pub = node.extendedPublicKey(family)
                #expect(pub.hasPrefix(family.publicPrefix), "\(pub) should start with \(family.publicPrefix)")
                let prv = try node.extendedPrivateKey(family)
                #expect(prv.hasPrefix(family.privatePrefix), "\(prv) should start with \(family.privatePrefix)")
                let (parsed, parsedFamily) = try HDNode.parse(prv)
                #expect(parsedFamily == family)
                #expect(parsed.extendedPublicKey(family) == pub)
            }
        }

        @Test("Derivation errors: hardened from public, absolute from non-root, seeds, depth")
        func derivationErrors() throws {
            let master = try HDNode(seed: hex("000102030405060708090a0b0c0d0e0f"))
            let xpub = master.neutered()
            #expect(throws: ExtendedKeyError.hardenedFromPublic(index: 0x8000_0000)) { try xpub.derive("m/0'") }
            #expect(throws: ExtendedKeyError.notPrivate) { try xpub.extendedPrivateKey() }
            let child = try master.derive("m/1")
            #expect(throws: ExtendedKeyError.absolutePathFromNonRoot(path: "m/0", depth: 1)) { try child.derive("m/0") }
            #expect(throws: ExtendedKeyError.seedLength(15)) { try HDNode(seed: [UInt8](repeating: 1, count: 15)) }
            #expect(throws: ExtendedKeyError.seedLength(65)) { try HDNode(seed: [UInt8](repeating: 1, count: 65)) }
            var deep = master.neutered()
            for _ in 0..<255 { deep = try deep.derive(child: 0) }
            #expect(deep.depth == 255)
            #expect(throws: ExtendedKeyError.tooDeep) { try deep.derive(child: 0) }
            #expect(!master.description.contains(try master.extendedPrivateKey()))
        }

        @Test("Derivation paths parse all spellings and point at bad components")
        func paths() throws {
            #expect(try DerivationPath("m/44'/60'/0'/0/0").indexes == [0x8000_002C, 0x8000_003C, 0x8000_0000, 0, 0])
            #expect(try DerivationPath("44h/0H/1").indexes == [0x8000_002C, 0x8000_0000, 1])
            #expect(try DerivationPath("44h/0H/1").isAbsolute == false)
            #expect(try DerivationPath("m").indexes.isEmpty)
            #expect(try DerivationPath("m/2147483647'").indexes == [0xFFFF_FFFF])
            #expect(try DerivationPath("m/44h/0'/5").description == "m/44'/0'/5")
            #expect(try DerivationPath(DerivationPath("m/1'/2/3'").description) == DerivationPath("m/1'/2/3'"))
            let error = try #require(throws: DerivationPathError.self) { try DerivationPath("m/44'/x") }
            #expect(error.component == 2 && error.text == "x" && error.problem == .notANumber)
            #expect(error.description == "invalid derivation path \"m/44'/x\": component 2 (\"x\") is not a number; use digits with an optional ' or h for hardened")
            #expect(throws: DerivationPathError(path: "m/2147483648", component: 1, text: "2147483648", problem: .indexTooLarge)) { try DerivationPath("m/2147483648") }
            #expect(throws: DerivationPathError(path: "m/99999999999999999999", component: 1, text: "99999999999999999999", problem: .indexTooLarge)) {
                try DerivationPath("m/99999999999999999999")
            }
            #expect(throws: DerivationPathError(path: "m/1//2", component: 2, text: "", problem: .emptyComponent)) { try DerivationPath("m/1//2") }
            #expect(throws: DerivationPathError(path: "m/1/", component: 2, text: "", problem: .emptyComponent)) { try DerivationPath("m/1/") }
            #expect(throws: DerivationPathError(path: "0/m", component: 2, text: "m", problem: .misplacedMaster)) { try DerivationPath("0/m") }
            #expect(throws: DerivationPathError(path: "m/-1", component: 1, text: "-1", problem: .notANumber)) { try DerivationPath("m/-1") }
            #expect(throws: DerivationPathError(path: "m/1''", component: 1, text: "1''", problem: .notANumber)) { try DerivationPath("m/1''") }
            #expect(throws: DerivationPathError(path: "", component: nil, text: nil, problem: .empty)) { try DerivationPath("") }
            let tooDeep = "m" + String(repeating: "/0", count: 256)
            #expect(throws: DerivationPathError(path: tooDeep, component: nil, text: nil, problem: .tooDeep(256))) { try DerivationPath(tooDeep) }
            #expect(try DerivationPath("m" + String(repeating: "/0", count: 255)).depth == 255)
        }

        @Test("Standard paths: BIP44/49/84/86 and EIP-1581")
        func standardPaths() throws {
            #expect(try StandardPath.bip44(coin: .ethereum).description == "m/44'/60'/0'/0/0")
            #expect(try StandardPath.bip49(coin: .bitcoinTestnet, account: 0, change: 0, index: 0).description == "m/49'/1'/0'/0/0")
            #expect(try StandardPath.bip84(coin: .bitcoin, change: 1, index: 7).description == "m/84'/0'/0'/1/7")
            #expect(try StandardPath.bip86(coin: .bitcoin, account: 2).description == "m/86'/0'/2'/0/0")
            #expect(try StandardPath.account(.p2pkh, coin: .litecoin, account: 1).description == "m/44'/2'/1'")
            #expect(try StandardPath.eip1581(keyType: StandardPath.eip1581Whisper).description == "m/43'/60'/1581'/0'/0")
            #expect(try StandardPath.eip1581(keyType: StandardPath.eip1581Encryption).description == "m/43'/60'/1581'/1'/0")
            #expect(throws: DerivationPathError.self) { try StandardPath.bip84(coin: .bitcoin, account: 0x8000_0000) }
            #expect(Coin.named("btc") == .bitcoin && Coin.named("Ethereum") == .ethereum && Coin.named("testnet") == .bitcoinTestnet)
            #expect(Coin.withSLIP44(61) == .ethereumClassic && Coin.withSLIP44(145) == .bitcoinCash && Coin.withSLIP44(3) == .dogecoin)
        }
    }
}
