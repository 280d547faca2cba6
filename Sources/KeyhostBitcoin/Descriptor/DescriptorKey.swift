import KeyhostCrypto

/// A key expression of a descriptor (BIP380, with BIP389's multipath step): an optional origin, a key, and for
/// an extended key the derivation steps after it, ending perhaps in a wildcard.
public struct DescriptorKey: Sendable {
    /// A derivation step after an extended key.
    public enum Step: Hashable, Sendable {
        /// A fixed index (hardened ones include 2^31).
        case index(UInt32)
        /// BIP389's `<a;b;…>`: one index per descriptor the multipath descriptor stands for.
        case multipath([UInt32])
    }

    /// The final `/*` step, if any.
    public enum Wildcard: String, Sendable {
        case none
        /// `/*`: children 0, 1, 2, … derived publicly.
        case unhardened
        /// `/*h`: hardened children, which need the private key.
        case hardened
    }

    /// What the key itself is.
    public enum Material: Sendable {
        /// A hex public key (33 or 65 bytes) or a WIF key's public key.
        case single(PublicKey)
        /// A 32-byte x-only key (inside `tr()` only).
        case xOnly(XOnlyPublicKey)
        /// An extended key; `node` is public-only unless derivation needs the private key (hardened steps after an xprv).
        case extended(HDNode, testnet: Bool)
    }

    /// `[fingerprint/path]`, where the key comes from.
    public let origin: KeyOrigin?
    public let material: Material
    /// Steps after an extended key (none for other keys).
    public let steps: [Step]
    public let wildcard: Wildcard
    /// The node after every step but the wildcard, one per multipath choice (one when there is none).
    let bases: [HDNode]

    init(origin: KeyOrigin?, material: Material, steps: [Step], wildcard: Wildcard) throws {
        self.origin = origin
        self.steps = steps
        self.wildcard = wildcard
        guard case .extended(let node, let testnet) = material else {
            self.material = material
            bases = []
            multipathCount = 1
            return
        }
        // The key as printed is public; a private key survives only in `bases`, and only for a hardened wildcard.
        self.material = .extended(node.neutered(), testnet: testnet)
        let choices = steps.lazy.compactMap { if case .multipath(let values) = $0 { return values.count } else { return nil } }.first ?? 1
        multipathCount = choices
        // BIP380 accepts hardened steps after an xpub as text; they only fail when a key is derived (publicKey says so).
        let hardened = wildcard == .hardened || steps.contains { step in
            switch step {
            case .index(let value): return value >= DerivationPath.hardenedOffset
            case .multipath(let values): return values.contains { $0 >= DerivationPath.hardenedOffset }
            }
        }
        guard node.isPrivate || !hardened else {
            bases = []
            return
        }
        var bases = [HDNode]()
        for choice in 0..<choices {
            var base = node
            for step in steps {
                switch step {
                case .index(let index): base = try base.derive(child: index)
                case .multipath(let values): base = try base.derive(child: values[choice])
                }
            }
            // Keep a private key only where the wildcard itself needs one.
            bases.append(wildcard == .hardened ? base : base.neutered())
        }
        self.bases = bases
    }

    /// How many descriptors a multipath step makes of this key (1 without one).
    public let multipathCount: Int

    /// Whether this key is derived per index (`/*`).
    public var isRange: Bool { wildcard != .none }

    /// The network an extended key was written for: true for tpub, false for xpub, nil for hex keys.
    public var isTestnet: Bool? {
        if case .extended(_, let testnet) = material { return testnet }
        return nil
    }

    /// The key for descriptor `choice` of a multipath descriptor at child `index` of the wildcard.
    public func publicKey(index: UInt32, choice: Int = 0) throws -> PublicKey {
        switch material {
        case .single(let key): return key
        case .xOnly(let key): return key.evenYPublicKey
        case .extended:
            guard !bases.isEmpty else {
                throw DescriptorError(.derivation, "the key has a hardened step after an xpub, which only its private key can derive; give the xpub at the "
                    + "last hardened step, with those steps in its origin [fingerprint/…] (BIP380)")
            }
            let base = bases[bases.count > 1 ? choice : 0]
            switch wildcard {
            case .none: return base.publicKey
            case .unhardened: return try base.derive(child: index).publicKey
            case .hardened: return try base.derive(child: index | DerivationPath.hardenedOffset).publicKey
            }
        }
    }

    /// The public-only parent of the wildcard for descriptor `choice` (nil unless the key is extended with `/*`).
    public func wildcardParent(choice: Int = 0) -> HDNode? {
        guard wildcard == .unhardened, case .extended = material, !bases.isEmpty else { return nil }
        return bases[bases.count > 1 ? choice : 0]
    }

    /// This key with its multipath step replaced by choice `choice` (itself when it has none).
    func selecting(_ choice: Int) -> DescriptorKey {
        guard multipathCount > 1 else { return self }
        let fixed = steps.map { step -> Step in
            if case .multipath(let values) = step { return .index(values[choice]) }
            return step
        }
        return DescriptorKey(origin: origin, material: material, steps: fixed, wildcard: wildcard, bases: bases.isEmpty ? [] : [bases[choice]])
    }

    private init(origin: KeyOrigin?, material: Material, steps: [Step], wildcard: Wildcard, bases: [HDNode]) {
        self.origin = origin
        self.material = material
        self.steps = steps
        self.wildcard = wildcard
        self.bases = bases
        multipathCount = 1
    }

    /// The full derivation path of the key at `index` when the origin is known (e.g. m/84h/0h/0h/0/5), else the
    /// path after the key (0/5).
    public func path(index: UInt32, choice: Int = 0) -> DerivationPath? {
        var indexes = origin?.path.indexes ?? []
        for step in steps {
            switch step {
            case .index(let value): indexes.append(value)
            case .multipath(let values): indexes.append(values[min(choice, values.count - 1)])
            }
        }
        switch wildcard {
        case .none: break
        case .unhardened: indexes.append(index)
        case .hardened: indexes.append(index | DerivationPath.hardenedOffset)
        }
        return try? DerivationPath(indexes: indexes, absolute: origin != nil)
    }

    /// The expression in its public form, hardened steps marked with `marker` ("h" or "'").
    func text(marker: String) -> String {
        var out = origin?.text(hardened: marker) ?? ""
        switch material {
        case .single(let key): out += Hex.encode(key.serialized)
        case .xOnly(let key): out += Hex.encode(key.bytes)
        case .extended(let node, let testnet): out += node.neutered().extendedPublicKey(testnet ? .tpub : .xpub)
        }
        return out + stepsText(marker: marker)
    }

    /// The steps after the key, e.g. "/<0;1>/*" (empty for hex keys).
    func stepsText(marker: String) -> String {
        var out = ""
        for step in steps {
            switch step {
            case .index(let value): out += "/" + DerivationPath.format(value, hardened: marker)
            case .multipath(let values): out += "/<" + values.map { DerivationPath.format($0, hardened: marker) }.joined(separator: ";") + ">"
            }
        }
        switch wildcard {
        case .none: break
        case .unhardened: out += "/*"
        case .hardened: out += "/*" + marker
        }
        return out
    }

}
