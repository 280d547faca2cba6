/// A strict reader of deterministic CBOR: anything another encoder could have written differently
/// (longer lengths, indefinite lengths, unsorted or repeated map keys, trailing bytes) is an error,
/// so one value has exactly one accepted encoding and signatures over encodings stay meaningful.
public struct CBORDecoder {
    /// Bounds checked before and while parsing.
    public struct Limits: Sendable {
        public var maxBytes: Int
        public var maxDepth: Int
        public var maxItems: Int

        public init(maxBytes: Int = 1 << 20, maxDepth: Int = 32, maxItems: Int = 1 << 16) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.maxItems = maxItems
        }
    }

    /// Decodes exactly one item that fills all of `bytes`.
    public static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws -> CBORValue {
        guard bytes.count <= limits.maxBytes else {
            throw CBORError(offset: 0, "\(bytes.count) bytes is more than the limit of \(limits.maxBytes)")
        }
        guard !bytes.isEmpty else { throw CBORError(offset: 0, "no data") }
        var reader = CBORDecoder(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 0)
        guard reader.position == bytes.count else {
            throw CBORError(offset: reader.position, "\(bytes.count - reader.position) bytes after the end of the item")
        }
        return value
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private var position = 0

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    private var remaining: Int { bytes.count - position }

    private mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw CBORError(offset: position, "the data ends in the middle of an item") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func take(_ count: UInt64, what: String, at start: Int) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else {
            throw CBORError(offset: start, "\(what) of \(count) bytes runs past the end of the data (\(remaining) bytes left)")
        }
        defer { position += Int(count) }
        return bytes[position..<position + Int(count)]
    }

    /// Reads a head; returns the major type and its argument, refusing non-shortest forms.
    private mutating func head() throws -> (major: UInt8, argument: UInt64, start: Int) {
        let start = position
        let initial = try byte()
        let major = initial >> 5, info = initial & 0x1F
        if major == 7 { return (7, UInt64(info), start) }
        let argument: UInt64
        switch info {
        case 0..<24: argument = UInt64(info)
        case 24...27:
            let size = 1 << Int(info - 24)
            var n: UInt64 = 0
            for _ in 0..<size { n = n << 8 | UInt64(try byte()) }
            let smallest: UInt64 = [24, 0x100, 0x1_0000, 0x1_0000_0000][Int(info - 24)]
            guard n >= smallest else {
                throw CBORError(offset: start, "non-deterministic encoding: \(n) written in \(size) bytes where fewer suffice")
            }
            argument = n
        case 31: throw CBORError(offset: start, "indefinite-length items are not allowed")
        default: throw CBORError(offset: start, "reserved additional information \(info)")
        }
        return (major, argument, start)
    }

    private mutating func item(depth: Int) throws -> CBORValue {
        guard depth <= limits.maxDepth else { throw CBORError(offset: position, "nested deeper than \(limits.maxDepth) levels") }
        let (major, argument, start) = try head()
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(Array(try take(argument, what: "a byte string", at: start)))
        case 3:
            let raw = try take(argument, what: "a text string", at: start)
            guard let text = String(validating: raw, as: UTF8.self) else { throw CBORError(offset: start, "text string is not valid UTF-8") }
            return .text(text)
        case 4:
            // Every item takes at least one byte: a count beyond what is left is a lie, not a reason to allocate.
            guard argument <= UInt64(min(remaining, limits.maxItems)) else {
                throw CBORError(offset: start, "array of \(argument) items is longer than the data or the limit of \(limits.maxItems)")
            }
            var items: [CBORValue] = []
            items.reserveCapacity(Int(argument))
            for _ in 0..<argument { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard argument <= UInt64(min(remaining / 2, limits.maxItems)) else {
                throw CBORError(offset: start, "map of \(argument) pairs is longer than the data or the limit of \(limits.maxItems)")
            }
            var pairs: [CBORPair] = []
            var previousKey: ArraySlice<UInt8>? = nil
            for _ in 0..<argument {
                let keyStart = position
                let key = try item(depth: depth + 1)
                let keyBytes = bytes[keyStart..<position]
                if let previousKey {
                    if previousKey == keyBytes { throw CBORError(offset: keyStart, "map key repeated") }
                    guard previousKey.lexicographicallyPrecedes(keyBytes) else {
                        throw CBORError(offset: keyStart, "non-deterministic encoding: map keys are not in sorted order")
                    }
                }
                previousKey = keyBytes
                pairs.append(CBORPair(key, try item(depth: depth + 1)))
            }
            return .map(pairs)
        case 6: throw CBORError(offset: start, "tags are not used in keyhost data (tag \(argument))")
        default:
            switch argument {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 25, 26, 27: throw CBORError(offset: start, "floating-point numbers are not allowed")
            case 31: throw CBORError(offset: start, "unexpected break (indefinite lengths are not allowed)")
            default: throw CBORError(offset: start, "simple value \(argument) is not allowed")
            }
        }
    }
}
