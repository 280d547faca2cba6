/// Encodes and decodes `CKTapCBOR` with bounds: a card's answer fits one short APDU, so anything bigger is hostile.
public enum CKTapCBORCoding {
    /// Deepest nesting decoded (the protocol's deepest is a map holding an array).
    public static let maxDepth = 8
    /// Most items in one array or map.
    public static let maxItems = 256
    /// Longest input decoded (an extended APDU's data field).
    public static let maxInput = 65_536

    /// The canonical (shortest-head) encoding of `value`, as cbor2 writes it.
    public static func encode(_ value: CKTapCBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ n: UInt64, to out: inout [UInt8]) {
        let m = major << 5
        switch n {
        case 0..<24: out.append(m | UInt8(n))
        case 24...0xFF: out += [m | 24, UInt8(n)]
        case 0x100...0xFFFF: out += [m | 25, UInt8(n >> 8), UInt8(truncatingIfNeeded: n)]
        case 0x1_0000...0xFFFF_FFFF:
            out.append(m | 26)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: n >> UInt64(shift))) }
        default:
            out.append(m | 27)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: n >> UInt64(shift))) }
        }
    }

    private static func append(_ value: CKTapCBOR, to out: inout [UInt8]) {
        switch value {
        case .unsigned(let n): head(0, n, to: &out)
        case .negative(let n): head(1, n, to: &out)
        case .bytes(let b): head(2, UInt64(b.count), to: &out); out += b
        case .text(let t): let u = Array(t.utf8); head(3, UInt64(u.count), to: &out); out += u
        case .array(let items): head(4, UInt64(items.count), to: &out); items.forEach { append($0, to: &out) }
        case .map(let pairs):
            head(5, UInt64(pairs.count), to: &out)
            for pair in pairs { append(pair.key, to: &out); append(pair.value, to: &out) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }

    /// The one item `bytes` hold; any malformed, unsupported or oversized input is a `CKTapCBORError`.
    public static func decode(_ bytes: [UInt8]) throws -> CKTapCBOR {
        guard bytes.count <= maxInput else { throw CKTapCBORError.inputTooLong(bytes.count, limit: maxInput) }
        var reader = Reader(bytes: bytes)
        let value = try reader.item(depth: 0)
        guard reader.offset == bytes.count else { throw CKTapCBORError.trailingBytes(offset: reader.offset) }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw CKTapCBORError.truncated(offset: offset) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws -> [UInt8] {
            guard count <= UInt64(bytes.count - offset) else { throw CKTapCBORError.truncated(offset: offset) }
            let n = Int(count)
            defer { offset += n }
            return Array(bytes[offset..<offset + n])
        }

        mutating func argument(_ info: UInt8, start: Int, initial: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let width = 1 << Int(info - 24)
                return try take(UInt64(width)).reduce(0) { $0 << 8 | UInt64($1) }
            default: throw CKTapCBORError.unsupported(offset: start, initialByte: initial)
            }
        }

        mutating func item(depth: Int) throws -> CKTapCBOR {
            guard depth <= CKTapCBORCoding.maxDepth else { throw CKTapCBORError.tooDeep(limit: CKTapCBORCoding.maxDepth) }
            let start = offset
            let initial = try byte()
            let major = initial >> 5, info = initial & 0x1F
            if major == 7 {
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw CKTapCBORError.unsupported(offset: start, initialByte: initial)
                }
            }
            let n = try argument(info, start: start, initial: initial)
            switch major {
            case 0: return .unsigned(n)
            case 1: return .negative(n)
            case 2: return .bytes(try take(n))
            case 3:
                let raw = try take(n)
                guard let text = String(validating: raw, as: UTF8.self) else { throw CKTapCBORError.invalidText(offset: start) }
                return .text(text)
            case 4:
                guard n <= UInt64(CKTapCBORCoding.maxItems) else { throw CKTapCBORError.tooLarge(what: "array", limit: CKTapCBORCoding.maxItems) }
                var items: [CKTapCBOR] = []
                for _ in 0..<n { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                guard n <= UInt64(CKTapCBORCoding.maxItems) else { throw CKTapCBORError.tooLarge(what: "map", limit: CKTapCBORCoding.maxItems) }
                var pairs: [CKTapCBORPair] = []
                for _ in 0..<n {
                    let key = try item(depth: depth + 1)
                    pairs.append(CKTapCBORPair(key: key, value: try item(depth: depth + 1)))
                }
                return .map(pairs)
            default:
                throw CKTapCBORError.unsupported(offset: start, initialByte: initial)
            }
        }
    }
}
