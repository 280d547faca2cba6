import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// Hostile descriptor text: every case is refused with the kind and the position the error names, never a trap,
/// and messages quote only a short excerpt.
@Suite("Descriptor hostile input")
struct DescriptorHostileTests {
    static let xpub = "xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"
    static let ypub = (try? HDNode(extendedKey: xpub).extendedPublicKey(.ypub)) ?? ""
    static let key = "03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd"

    @Test("refused with kind and position", arguments: [
        ("", DescriptorError.Kind.invalid, nil),
        ("wpkh(\(xpub)/0/*)\u{7}", .invalid, 121),
        ("wpkh(\(xpub)/0/*) ", .invalid, 121),
        ("wpkh(\(xpub)/0/*", .invalid, 120),
        ("wpkh(\(xpub)/0/*))", .invalid, 121),
        ("wpkh(\(xpub)//*)", .invalid, 117),
        ("wpkh(\(xpub)/0/)", .invalid, 119),
        ("wpkh(\(xpub)/*/0)", .invalid, 118),
        ("wpkh(\(xpub)/2147483648/*)", .invalid, 117),
        ("wpkh(\(xpub)/99999999999999999999/*)", .invalid, 117),
        ("wpkh(\(xpub)/+1/*)", .invalid, 117),
        ("wpkh(\(xpub)/1H/*)", .invalid, 118),
        ("wpkh(\(xpub)/*H)", .invalid, 118),
        ("wpkh(\(xpub)/<0;0>/*)", .invalid, 120),
        ("wpkh(\(xpub)/<0>/*)", .invalid, 117),
        ("wpkh(\(xpub)/<0;1>/<2;3>/*)", .invalid, 123),
        ("wsh(multi(1,\(xpub)/<0;1>/*,\(xpub)/<0;1;2>/*))", .invalid, 244),
        ("wpkh([d34db33f/0h]]\(xpub))", .invalid, 18),
        ("wpkh(\(key))#", .checksum, 72),
        ("wpkh(\(key))#abcdefgh#", .checksum, 81),
        ("wpkh(\(key))#ABCDEFGH", .checksum, 73),
        ("sh(sh(sh(sh(sh(wpkh(\(key)))))))", .invalid, 3),
        ("wsh(wsh(pkh(\(key))))", .invalid, 4),
        ("pkh(\(String(repeating: "a", count: 66)))", .invalid, 4),
        ("pkh(\(String(repeating: "0", count: 66)))", .invalid, 4),
        ("tr(\(key),pk(\(key)))", .unsupported, 69),
        ("combo(\(key))", .unsupported, 0),
        ("wsh(and_v(v:pk(\(key)),older(1)))", .invalid, 4),
        ("wpkh(\(ypub))", .invalid, 5),
        ("multi(1,\(key),\(key),\(key),\(key))", .invalid, 0),
        ("wsh(multi(21,\((0..<21).map { _ in key }.joined(separator: ","))))", .invalid, 1353),
        ("wpkh(L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1)", .privateKey, 5),
        ("pkh(xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U/0)", .privateKey, 4),
    ] as [(String, DescriptorError.Kind, Int?)])
    func refused(text: String, kind: DescriptorError.Kind, position: Int?) throws {
        let error = try #require(throws: DescriptorError.self) { _ = try OutputDescriptor.parse(text) }
        #expect(error.kind == kind, "\(text.prefix(60)): \(error)")
        if let position { #expect(error.position == position, "\(text.prefix(60)): \(error)") }
        // No message repeats a whole key.
        #expect(!error.description.contains(Self.xpub) && !error.description.contains("L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1"))
    }

    @Test("length, nesting and index bounds")
    func bounds() throws {
        let long = "pkh(" + String(repeating: "0", count: OutputDescriptor.maxLength) + ")"
        let error = try #require(throws: DescriptorError.self) { _ = try OutputDescriptor.parse(long) }
        #expect(error.description.count < 200)
        // Deep nesting fails at the first level the grammar forbids, without recursing further.
        let deep = String(repeating: "sh(", count: 5000) + Self.key + String(repeating: ")", count: 5000)
        #expect(throws: DescriptorError.self) { _ = try OutputDescriptor.parse(String(deep.prefix(OutputDescriptor.maxLength))) }
        let ranged = try OutputDescriptor.parse("wpkh(\(Self.xpub)/0/*)")
        #expect(throws: DescriptorError.self) { _ = try ranged.address(index: DerivationPath.hardenedOffset) }
        #expect(throws: DescriptorError.self) { _ = try ranged.addresses(from: DerivationPath.hardenedOffset - 1, count: 2) }
        #expect(try ranged.addresses(from: DerivationPath.hardenedOffset - 1, count: 1).count == 1)
        let single = try OutputDescriptor.parse("wpkh(\(Self.key))")
        #expect(throws: DescriptorError.self) { _ = try single.address(index: 1) }
        // Bare multisig and pk have scripts but no address.
        let bare = try OutputDescriptor.parse("multi(1,\(Self.key))")
        #expect(try bare.scriptPubKey().count == 37)
        let noAddress = try #require(throws: DescriptorError.self) { _ = try bare.address() }
        #expect(noAddress.kind == .derivation)
        // A hardened step after an xpub parses (BIP380) but does not derive.
        let hardened = try OutputDescriptor.parse("wpkh(\(Self.xpub)/0h/*)")
        #expect(hardened.body == "wpkh(\(Self.xpub)/0h/*)")
        #expect(throws: DescriptorError.self) { _ = try hardened.address(index: 0) }
        // Networks: an xpub descriptor is mainnet's only; hex keys go anywhere.
        #expect(throws: DescriptorError.self) { _ = try ranged.address(index: 0, network: .regtest) }
        #expect(try single.address(network: .regtest).hasPrefix("bcrt1q"))
    }

    @Test("the normal form: lower-case hex, the text's hardened marker, and it parses back to itself")
    func normalForm() throws {
        let upper = try OutputDescriptor.parse("pkh([D34DB33F/44'/0'/0']\(Self.key.uppercased()))")
        #expect(upper.body == "pkh([d34db33f/44'/0'/0']\(Self.key))")
        let h = try OutputDescriptor.parse("wpkh([d34db33f/84h/0h/0h]\(Self.xpub)/<0;1>/*)")
        #expect(h.body.contains("/84h/0h/0h]"))
        #expect(try OutputDescriptor.parse(h.description).description == h.description)
    }
}
