/// Recursive Length Prefix, Ethereum's serialization of byte strings and lists.
///
/// Decoding is strict: only the one canonical encoding of each item is accepted (geth and the
/// ethereum/tests suite reject the others), so a decoded transaction re-encodes to the same bytes.
public indirect enum RLPItem: Hashable, Sendable {
    case bytes([UInt8])
    case list([RLPItem])

    /// The item for an unsigned integer: its big-endian bytes without leading zeros.
    public static func integer(_ value: UInt256) -> RLPItem { .bytes(value.minimalBytes) }
    public static func integer(_ value: UInt64) -> RLPItem { .integer(UInt256(value)) }
}

public enum RLP {
    /// Largest input `decode` reads by default: well above geth's 128 KiB transaction limit.
    public static let defaultMaxInput = 4 << 20
    /// Deepest list nesting `decode` follows by default (a transaction nests three deep).
    public static let defaultMaxDepth = 64

    public static func encode(_ item: RLPItem) -> [UInt8] {
        var out = [UInt8]()
        append(item, to: &out)
        return out
    }

    private static func append(_ item: RLPItem, to out: inout [UInt8]) {
        switch item {
        case .bytes(let bytes):
            if bytes.count == 1, bytes[0] < 0x80 {
                out.append(bytes[0])
            } else {
                appendHeader(bytes.count, shortBase: 0x80, to: &out)
                out.append(contentsOf: bytes)
            }
        case .list(let items):
            var body = [UInt8]()
            for child in items { append(child, to: &body) }
            appendHeader(body.count, shortBase: 0xc0, to: &out)
            out.append(contentsOf: body)
        }
    }

    /// Short form below 56 bytes; otherwise base + 55 + length-of-length, then the length big-endian.
    private static func appendHeader(_ length: Int, shortBase: UInt8, to out: inout [UInt8]) {
        if length < 56 {
            out.append(shortBase + UInt8(length))
        } else {
            let lengthBytes = UInt256(UInt64(length)).minimalBytes
            out.append(shortBase + 55 + UInt8(lengthBytes.count))
            out.append(contentsOf: lengthBytes)
        }
    }

    /// Decodes exactly one item filling all of `input`.
    public static func decode(_ input: [UInt8], maxInput: Int = defaultMaxInput, maxDepth: Int = defaultMaxDepth) throws -> RLPItem {
        guard input.count <= maxInput else { throw RLPError(offset: 0, problem: .inputTooLarge(input.count, limit: maxInput)) }
        guard !input.isEmpty else { throw RLPError(offset: 0, problem: .empty) }
        var decoder = Decoder(input: input, maxDepth: maxDepth)
        let (item, end) = try decoder.item(at: 0, limit: input.count, depth: 0)
        guard end == input.count else { throw RLPError(offset: end, problem: .trailingBytes(input.count - end)) }
        return item
    }

    private struct Decoder {
        let input: [UInt8]
        let maxDepth: Int

        /// The item starting at `offset`, which must end by `limit`; returns it and the offset after it.
        mutating func item(at offset: Int, limit: Int, depth: Int) throws -> (RLPItem, Int) {
            guard offset < limit else { throw RLPError(offset: offset, problem: .truncated(needed: 1, available: 0)) }
            let prefix = input[offset]
            switch prefix {
            case 0x00...0x7f:
                return (.bytes([prefix]), offset + 1)
            case 0x80...0xbf:
                let (start, length) = try header(at: offset, limit: limit, shortBase: 0x80)
                let bytes = Array(input[start..<start + length])
                if length == 1, bytes[0] < 0x80 {
                    throw RLPError(offset: offset, problem: .nonCanonical("a single byte below 0x80 is its own encoding, without a 0x81 prefix"))
                }
                return (.bytes(bytes), start + length)
            default:
                guard depth < maxDepth else { throw RLPError(offset: offset, problem: .tooDeep(limit: maxDepth)) }
                let (start, length) = try header(at: offset, limit: limit, shortBase: 0xc0)
                var items = [RLPItem]()
                var cursor = start
                let end = start + length
                while cursor < end {
                    let (child, next) = try item(at: cursor, limit: end, depth: depth + 1)
                    items.append(child)
                    cursor = next
                }
                return (.list(items), end)
            }
        }

        /// The payload's start and length for a string (base 0x80) or list (base 0xc0) prefix at `offset`.
        func header(at offset: Int, limit: Int, shortBase: UInt8) throws -> (start: Int, length: Int) {
            let prefix = input[offset]
            let available = limit - offset - 1
            if prefix <= shortBase + 55 {
                let length = Int(prefix - shortBase)
                guard length <= available else { throw RLPError(offset: offset, problem: .truncated(needed: length, available: available)) }
                return (offset + 1, length)
            }
            let lengthOfLength = Int(prefix - shortBase - 55)  // 1...8
            guard lengthOfLength <= available else {
                throw RLPError(offset: offset, problem: .truncated(needed: lengthOfLength, available: available))
            }
            let lengthBytes = input[(offset + 1)...(offset + lengthOfLength)]
            if lengthBytes.first == 0 {
                throw RLPError(offset: offset + 1, problem: .nonCanonical("the length has a leading zero byte"))
            }
            // Fold with an overflow check: eight bytes can say more than Int.max.
            var length = 0
            for byte in lengthBytes {
                let (shifted, o1) = length.multipliedReportingOverflow(by: 256)
                let (sum, o2) = shifted.addingReportingOverflow(Int(byte))
                guard !o1, !o2 else { throw RLPError(offset: offset + 1, problem: .truncated(needed: Int.max, available: available - lengthOfLength)) }
                length = sum
            }
            if length < 56 {
                throw RLPError(offset: offset, problem: .nonCanonical("a length of \(length) below 56 must use the one-byte short form"))
            }
            let rest = available - lengthOfLength
            guard length <= rest else { throw RLPError(offset: offset, problem: .truncated(needed: length, available: rest)) }
            return (offset + 1 + lengthOfLength, length)
        }
    }
}

/// RLP input that does not decode, with the byte offset where decoding stopped.
public struct RLPError: Error, Equatable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        case empty
        case inputTooLarge(Int, limit: Int)
        case truncated(needed: Int, available: Int)
        case trailingBytes(Int)
        case nonCanonical(String)
        case tooDeep(limit: Int)
    }

    public let offset: Int
    public let problem: Problem

    public init(offset: Int, problem: Problem) {
        self.offset = offset
        self.problem = problem
    }

    /// Machine-readable kind, as `--json` and Lua's structured errors report it.
    public var kind: String { "invalid_rlp" }

    public var description: String {
        let at = "invalid RLP at byte \(offset): "
        switch problem {
        case .empty: return "invalid RLP: no bytes; an RLP item is at least one byte"
        case .inputTooLarge(let n, let limit): return "RLP input of \(n) bytes is over the \(limit)-byte limit"
        case .truncated(let needed, let available):
            if needed == Int.max { return at + "the length does not fit in memory; the input is corrupt" }
            return at + "the item needs \(needed) more bytes but only \(available) remain; the input is truncated or corrupt"
        case .trailingBytes(let n): return at + "\(n) bytes follow the complete item; give exactly one item"
        case .nonCanonical(let why): return at + "non-canonical encoding: \(why)"
        case .tooDeep(let limit): return at + "lists nest deeper than \(limit) levels"
        }
    }
}
