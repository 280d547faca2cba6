import KeyhostCrypto

/// An output script descriptor (BIP380–386, BIP389 multipath): parsed, checked, and able to derive its scripts
/// and addresses.
///
/// Printing gives the public form with its checksum; a private key read with `allowPrivateKeys` is never printed.
public struct OutputDescriptor: Sendable, CustomStringConvertible {
    /// The longest descriptor text read (a 20-key wsh(sortedmulti) with origins is under 3,500 characters).
    public static let maxLength = 16_384
    /// Most choices in one `<a;b;…>` step.
    public static let maxMultipath = 256

    public let script: DescriptorScript
    /// How hardened steps are written when printed: as the text given them ("h" unless it used "'").
    let marker: String

    init(script: DescriptorScript, marker: String) {
        self.script = script
        self.marker = marker
    }

    /// Parses `text`, verifying its `#checksum` when present. Private keys (WIF, xprv/tprv) are refused unless
    /// `allowPrivateKeys` is set.
    public static func parse(_ text: String, allowPrivateKeys: Bool = false) throws -> OutputDescriptor {
        try DescriptorParser.parse(text, allowPrivateKeys: allowPrivateKeys)
    }

    /// Every key, in the order written.
    public var keys: [DescriptorKey] { script.keys }

    /// Whether the descriptor has `/*` keys, so one script per index.
    public var isRange: Bool { keys.contains { $0.isRange } }

    /// How many descriptors a multipath descriptor stands for (1 when it has no `<a;b>` step).
    public var multipathCount: Int { keys.map(\.multipathCount).max() ?? 1 }

    /// True for tpub keys, false for xpub keys, nil when the keys are hex only (any network).
    public var isTestnet: Bool? { keys.lazy.compactMap(\.isTestnet).first }

    /// The shape without keys, e.g. "wsh(sortedmulti)".
    public var form: String { script.form }

    /// The descriptor for each choice of its multipath step (itself alone when it has none).
    public func multipath() -> [OutputDescriptor] {
        let count = multipathCount
        guard count > 1 else { return [self] }
        return (0..<count).map { OutputDescriptor(script: script.selecting($0), marker: marker) }
    }

    /// The public text without the checksum.
    public var body: String { script.text(marker: marker) }

    /// The BIP380 checksum of `body`.
    public var checksum: String {
        // Cannot fail: `body` is built from BIP380's character set.
        (try? DescriptorChecksum.compute(body)) ?? ""
    }

    /// The public text with its checksum, e.g. `wpkh([d34db33f/84h/0h/0h]xpub…/0/*)#abcdefgh`.
    public var description: String { body + "#" + checksum }

    /// The output script at `index` (0 for a descriptor without `/*`).
    public func scriptPubKey(index: UInt32 = 0) throws -> [UInt8] {
        try check(index: index)
        do { return try script.script(index: index, choice: 0) } catch let error as DescriptorError { throw error } catch {
            throw DescriptorError(.derivation, "index \(index): \(error)")
        }
    }

    /// The address at `index` on `network` (by default the keys' network: testnet for tpub, else mainnet).
    public func address(index: UInt32 = 0, network: BitcoinNetwork? = nil) throws -> String {
        try addresses(from: index, count: 1, network: network)[0]
    }

    /// The addresses at `from ..< from + count`, derived over all cores when the descriptor is a single-key one.
    public func addresses(from: UInt32, count: Int, network: BitcoinNetwork? = nil) throws -> [String] {
        let net = try resolve(network)
        guard count > 0 else { return [] }
        let last = UInt64(from) + UInt64(count) - 1
        guard last < UInt64(DerivationPath.hardenedOffset) else {
            throw DescriptorError(.derivation, "indexes \(from)…\(last) pass 2147483647, the largest index a /* step takes")
        }
        try check(index: UInt32(last))
        try check(index: from)
        if let (kind, key) = script.singleKeyKind, let parent = key.wildcardParent(), count > 1 {
            do { return try parent.addresses(kind, coin: net.coin, from: from, count: count) } catch let error as InterruptedError { throw error } catch {
                throw DescriptorError(.derivation, "indexes \(from)…\(last): \(error)")
            }
        }
        return try (0..<UInt32(count)).map { offset in
            let index = from + offset
            let output = try scriptPubKey(index: index)
            guard let address = Script.address(output, coin: net.coin) else {
                throw DescriptorError(.derivation, "a \(form) output has no address (its script is \(Hex.encode(output)))")
            }
            return address
        }
    }

    /// The network to use, after checking that the keys were written for it.
    public func resolve(_ network: BitcoinNetwork?) throws -> BitcoinNetwork {
        let keysTestnet = isTestnet
        guard let network else { return keysTestnet == true ? .testnet : .mainnet }
        if let keysTestnet, keysTestnet != network.isTestnet {
            throw DescriptorError(.network, keysTestnet
                ? "the descriptor's keys are tpub (test networks), but \(network.rawValue) addresses were asked; use testnet, signet or regtest, or the account's xpub"
                : "the descriptor's keys are xpub (mainnet), but \(network.rawValue) addresses were asked; use mainnet, or the account's tpub")
        }
        return network
    }

    private func check(index: UInt32) throws {
        guard multipathCount == 1 else {
            throw DescriptorError(.derivation, "this multipath descriptor stands for \(multipathCount) descriptors (one per <…> choice); "
                + "derive from one of them (multipath())")
        }
        guard index < DerivationPath.hardenedOffset else {
            throw DescriptorError(.derivation, "index \(index) is out of range; a /* step takes 0…2147483647")
        }
        guard isRange || index == 0 else {
            throw DescriptorError(.derivation, "the descriptor has no /* step, so it has one script; use index 0")
        }
    }
}
