/// The CBOR (RFC 8949) subset the tap protocol uses: unsigned and negative integers, byte and text strings,
/// arrays, maps, booleans and null. No tags, floats or indefinite lengths: a card never sends them.
public indirect enum CKTapCBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The integer -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CKTapCBOR])
    /// Pairs in wire order (the protocol leaves order open; keeping it lets encodings round-trip byte for byte).
    case map([CKTapCBORPair])
    case bool(Bool)
    case null

    /// A non-negative or negative integer, as its Swift value when it fits.
    public var int: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: return nil
        }
    }

    public var byteString: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var textString: String? { if case .text(let t) = self { return t } else { return nil } }
    public var arrayValue: [CKTapCBOR]? { if case .array(let a) = self { return a } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The value under text key `key` of a map (the first, if a hostile peer repeats it).
    public subscript(key: String) -> CKTapCBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// An integer value, from Swift's Int.
    public static func int(_ value: Int) -> CKTapCBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// A map with text keys, in the order given.
    public static func textMap(_ pairs: [(String, CKTapCBOR)]) -> CKTapCBOR {
        .map(pairs.map { CKTapCBORPair(key: .text($0.0), value: $0.1) })
    }
}

/// One key and value of a CBOR map.
public struct CKTapCBORPair: Equatable, Sendable {
    public var key: CKTapCBOR
    public var value: CKTapCBOR
    public init(key: CKTapCBOR, value: CKTapCBOR) {
        self.key = key
        self.value = value
    }
}
