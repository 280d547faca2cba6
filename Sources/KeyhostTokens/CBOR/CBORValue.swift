/// A CBOR data item of the kinds keyhost tokens use: integers, byte and text strings, arrays,
/// maps, booleans and null. Floats, tags and other simple values are never produced or accepted.
public indirect enum CBORValue: Equatable, Sendable {
    /// An unsigned integer (major type 0).
    case unsigned(UInt64)
    /// The negative integer `-1 - n` (major type 1).
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Pairs in any order; encoding sorts them as deterministic CBOR requires.
    case map([CBORPair])
    case bool(Bool)
    case null

    /// An integer of either sign.
    public static func int(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The value as an Int64 when it is an integer in range.
    public var int64: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -Int64(n) - 1 : nil
        default: return nil
        }
    }

    /// The value of the text key `key` in a map.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// What the value is, for error messages.
    public var kindName: String {
        switch self {
        case .unsigned, .negative: return "integer"
        case .bytes: return "byte string"
        case .text: return "text string"
        case .array: return "array"
        case .map: return "map"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }
}

/// One key and value of a CBOR map.
public struct CBORPair: Equatable, Sendable {
    public var key: CBORValue
    public var value: CBORValue
    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}
