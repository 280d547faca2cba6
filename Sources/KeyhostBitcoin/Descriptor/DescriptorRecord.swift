import KeyhostCrypto
import KeyhostRecord

extension OutputDescriptor {
    /// The descriptor in normal form and its parts, as `keyhost descriptor parse --json` and Lua's `d:info()` give it.
    public var record: Record {
        var fields: [(String, Record)] = [
            ("descriptor", .string(description)),
            ("checksum", .string(checksum)),
            ("form", .string(form)),
            ("is_range", .bool(isRange)),
            ("multipath", .integer(Int64(multipathCount))),
            ("network", isTestnet.map { .string($0 ? "testnet" : "mainnet") } ?? .null),
            ("keys", .array(keys.map { keyRecord($0) })),
        ]
        if case .multi(let threshold, _, _) = innermost { fields.append(("threshold", .integer(Int64(threshold)))) } else { fields.append(("threshold", .null)) }
        fields.append(("descriptors", .array(multipath().map { .string($0.description) })))
        return .object(fields)
    }

    /// The script expression under any sh()/wsh() wrappers.
    private var innermost: DescriptorScript {
        var script = self.script
        while true {
            switch script {
            case .sh(let inner), .wsh(let inner): script = inner
            default: return script
            }
        }
    }

    private func keyRecord(_ key: DescriptorKey) -> Record {
        let origin: Record = key.origin.map { origin in
            .object([("fingerprint", .string(origin.fingerprintHex)),
                     ("path", .string((["m"] + origin.path.indexes.map { DerivationPath.format($0, hardened: marker) }).joined(separator: "/")))])
        } ?? .null
        let kind: String
        let text: String
        switch key.material {
        case .single(let publicKey): kind = publicKey.isCompressed ? "hex" : "hex_uncompressed"; text = Hex.encode(publicKey.serialized)
        case .xOnly(let xOnly): kind = "x_only"; text = Hex.encode(xOnly.bytes)
        case .extended(let node, let testnet): kind = testnet ? "tpub" : "xpub"; text = node.extendedPublicKey(testnet ? .tpub : .xpub)
        }
        let multipath: Record = key.steps.lazy.compactMap { step -> Record? in
            if case .multipath(let values) = step { return .array(values.map { .integer(Int64($0)) }) }
            return nil
        }.first ?? .null
        return .object([
            ("origin", origin), ("kind", .string(kind)), ("key", .string(text)),
            ("steps", .string(key.stepsText(marker: marker))),
            ("wildcard", .string(key.wildcard.rawValue)), ("multipath", multipath),
        ])
    }
}
