import KeyhostCrypto
import KeyhostTokens

/// A CBOR value for `--json` output: text as strings, bytes as hex strings, integers as numbers
/// (beyond 2^53 as decimal strings, which JSON readers cannot hold exactly), maps as objects with
/// their keys as text, null as null.
func jsonValue(_ value: CBORValue) -> Any {
    switch value {
    case .unsigned(let n): return n <= 1 << 53 ? Int64(n) as Any : String(n)
    case .negative(let n): return n < 1 << 53 ? -Int64(n) - 1 as Any : value.diagnostic // -2^64 needs a 20th digit
    case .bytes(let b): return Hex.encode(b)
    case .text(let t): return t
    case .bool(let b): return b
    case .null: return JSONNull()
    case .array(let items): return items.map(jsonValue)
    case .map(let pairs):
        var object: [String: Any] = [:]
        for pair in pairs {
            let key: String
            switch pair.key {
            case .text(let t): key = t
            case .unsigned, .negative: key = pair.key.diagnostic
            default: key = pair.key.diagnostic
            }
            object[key] = jsonValue(pair.value)
        }
        return object
    }
}
