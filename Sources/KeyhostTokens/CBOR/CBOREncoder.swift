/// Deterministic CBOR (RFC 8949 §4.2.1): shortest argument encodings, definite lengths only,
/// map keys sorted by the bytewise order of their encodings.
public enum CBOREncoder {
    /// The deterministic encoding of `value`.
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    static func appendHead(major: UInt8, argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
        case 24...0xFF:
            out.append(type | 24)
            out.append(UInt8(argument))
        case 0x100...0xFFFF:
            out.append(type | 25)
            for shift in stride(from: 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift))) }
        case 0x1_0000...0xFFFF_FFFF:
            out.append(type | 26)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift))) }
        default:
            out.append(type | 27)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift))) }
        }
    }

    private static func append(_ value: CBORValue, to out: inout [UInt8]) {
        switch value {
        case .unsigned(let n): appendHead(major: 0, argument: n, to: &out)
        case .negative(let n): appendHead(major: 1, argument: n, to: &out)
        case .bytes(let b):
            appendHead(major: 2, argument: UInt64(b.count), to: &out)
            out.append(contentsOf: b)
        case .text(let s):
            let utf8 = Array(s.utf8)
            appendHead(major: 3, argument: UInt64(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        case .array(let items):
            appendHead(major: 4, argument: UInt64(items.count), to: &out)
            for item in items { append(item, to: &out) }
        case .map(let pairs):
            appendHead(major: 5, argument: UInt64(pairs.count), to: &out)
            // Only the keys are encoded apart, to sort; each value is encoded straight into `out`
            // (values hold the large parts: programs, chains, effects).
            let keys = pairs.map { encode($0.key) }
            var order = Array(keys.indices)
            if !zip(keys, keys.dropFirst()).allSatisfy({ !$1.lexicographicallyPrecedes($0) }) {
                order.sort { keys[$0].lexicographicallyPrecedes(keys[$1]) || (keys[$0] == keys[$1] && $0 < $1) }
            }
            for index in order {
                out.append(contentsOf: keys[index])
                append(pairs[index].value, to: &out)
            }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }
}
