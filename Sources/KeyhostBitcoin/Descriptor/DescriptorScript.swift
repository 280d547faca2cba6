import KeyhostCrypto

/// The script expressions keyhost derives (BIP381 pk/pkh/sh, BIP382 wpkh/wsh, BIP383 multi/sortedmulti, BIP386 tr(KEY)).
public indirect enum DescriptorScript: Sendable {
    case pk(DescriptorKey)
    case pkh(DescriptorKey)
    case wpkh(DescriptorKey)
    case sh(DescriptorScript)
    case wsh(DescriptorScript)
    case multi(threshold: Int, keys: [DescriptorKey], sorted: Bool)
    /// Key path only: a taproot output with no script tree (BIP86's form).
    case tr(DescriptorKey)

    /// Every key, in the order written.
    public var keys: [DescriptorKey] {
        switch self {
        case .pk(let key), .pkh(let key), .wpkh(let key), .tr(let key): return [key]
        case .sh(let inner), .wsh(let inner): return inner.keys
        case .multi(_, let keys, _): return keys
        }
    }

    /// The shape without keys, e.g. "sh(wpkh)" or "wsh(sortedmulti)".
    public var form: String {
        switch self {
        case .pk: return "pk"
        case .pkh: return "pkh"
        case .wpkh: return "wpkh"
        case .tr: return "tr"
        case .sh(let inner): return "sh(\(inner.form))"
        case .wsh(let inner): return "wsh(\(inner.form))"
        case .multi(_, _, let sorted): return sorted ? "sortedmulti" : "multi"
        }
    }

    /// The output script for child `index` of every wildcard, in multipath choice `choice`.
    func script(index: UInt32, choice: Int) throws -> [UInt8] {
        switch self {
        case .pk(let key):
            return Script.push(try key.publicKey(index: index, choice: choice).serialized) + [0xac]
        case .pkh(let key):
            return Script.p2pkh(try key.publicKey(index: index, choice: choice).hash160)
        case .wpkh(let key):
            return Script.p2wpkh(try key.publicKey(index: index, choice: choice).hash160)
        case .tr(let key):
            let internalKey = try key.publicKey(index: index, choice: choice).xOnly
            return Script.p2tr(try internalKey.taprootOutputKey().bytes)
        case .sh(let inner):
            return Script.p2sh(Hash.hash160(try inner.script(index: index, choice: choice)))
        case .wsh(let inner):
            return Script.p2wsh(Hash.sha256(try inner.script(index: index, choice: choice)))
        case .multi(let threshold, let keys, let sorted):
            var serialized = try keys.map { try $0.publicKey(index: index, choice: choice).serialized }
            // BIP67: sortedmulti orders keys by their serialization.
            if sorted { serialized.sort { $0.lexicographicallyPrecedes($1) } }
            var out = DescriptorScript.smallNumber(threshold)
            for key in serialized { out += Script.push(key) }
            return out + DescriptorScript.smallNumber(keys.count) + [0xae]
        }
    }

    /// A multisig count as script: OP_1…OP_16, or a one-byte push for 17…20 (as CScript << n writes it).
    static func smallNumber(_ n: Int) -> [UInt8] {
        n <= 16 ? [UInt8(0x50 + n)] : [0x01, UInt8(n)]
    }

    /// Text with every key in its public form.
    func text(marker: String) -> String {
        switch self {
        case .pk(let key): return "pk(\(key.text(marker: marker)))"
        case .pkh(let key): return "pkh(\(key.text(marker: marker)))"
        case .wpkh(let key): return "wpkh(\(key.text(marker: marker)))"
        case .tr(let key): return "tr(\(key.text(marker: marker)))"
        case .sh(let inner): return "sh(\(inner.text(marker: marker)))"
        case .wsh(let inner): return "wsh(\(inner.text(marker: marker)))"
        case .multi(let threshold, let keys, let sorted):
            return (sorted ? "sortedmulti(" : "multi(") + ([String(threshold)] + keys.map { $0.text(marker: marker) }).joined(separator: ",") + ")"
        }
    }

    /// The same expression with each key's multipath step fixed to `choice`.
    func selecting(_ choice: Int) -> DescriptorScript {
        switch self {
        case .pk(let key): return .pk(key.selecting(choice))
        case .pkh(let key): return .pkh(key.selecting(choice))
        case .wpkh(let key): return .wpkh(key.selecting(choice))
        case .tr(let key): return .tr(key.selecting(choice))
        case .sh(let inner): return .sh(inner.selecting(choice))
        case .wsh(let inner): return .wsh(inner.selecting(choice))
        case .multi(let threshold, let keys, let sorted): return .multi(threshold: threshold, keys: keys.map { $0.selecting(choice) }, sorted: sorted)
        }
    }

    /// The single-key address kind this expression is, for fast batch derivation (nil for everything else).
    var singleKeyKind: (AddressKind, DescriptorKey)? {
        switch self {
        case .pkh(let key): return (.p2pkh, key)
        case .wpkh(let key): return (.p2wpkh, key)
        case .tr(let key): return (.p2tr, key)
        case .sh(.wpkh(let key)): return (.p2shP2wpkh, key)
        default: return nil
        }
    }
}
