import KeyhostCrypto

/// An unsigned 256-bit integer: Ethereum's quantities (value, fees, chain id) do not fit in 64 bits.
///
/// Only what transactions and EIP-712 need: parsing, printing, big-endian bytes and a little arithmetic.
/// Every operation reports overflow instead of trapping, because the numbers come from users.
public struct UInt256: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Limbs least significant first.
    private var limbs: (UInt64, UInt64, UInt64, UInt64)

    public static let zero = UInt256(0)
    public static let max = UInt256(limbs: (.max, .max, .max, .max))

    private init(limbs: (UInt64, UInt64, UInt64, UInt64)) { self.limbs = limbs }

    public init(_ value: UInt64) { limbs = (value, 0, 0, 0) }

    /// The number whose big-endian bytes are `bytes` (leading zeros allowed); nil when it needs more than 32 bytes.
    public init?<C: Collection>(bigEndian bytes: C) where C.Element == UInt8 {
        var value = UInt256.zero
        var significant = false
        var count = 0
        for byte in bytes {
            if byte != 0 { significant = true }
            guard significant else { continue }
            count += 1
            guard count <= 32 else { return nil }
            value = value.shiftedLeftByte(byte)
        }
        self = value
    }

    private var words: [UInt64] { [limbs.0, limbs.1, limbs.2, limbs.3] }
    private init(words: [UInt64]) { limbs = (words[0], words[1], words[2], words[3]) }

    public var isZero: Bool { limbs.0 == 0 && limbs.1 == 0 && limbs.2 == 0 && limbs.3 == 0 }

    /// The value when it fits in 64 bits.
    public var uint64: UInt64? { limbs.1 == 0 && limbs.2 == 0 && limbs.3 == 0 ? limbs.0 : nil }

    /// Number of significant bits (0 for zero).
    public var bitWidth: Int {
        let w = words
        for i in stride(from: 3, through: 0, by: -1) where w[i] != 0 {
            return i * 64 + (64 - w[i].leadingZeroBitCount)
        }
        return 0
    }

    /// 32 bytes, big-endian: an EIP-712 word or a signature half.
    public var word: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for limb in words.reversed() {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) }
        }
        return out
    }

    /// Big-endian bytes without leading zeros (empty for zero): how RLP writes an integer.
    public var minimalBytes: [UInt8] { Array(word.drop { $0 == 0 }) }

    // MARK: arithmetic (each returns nil on overflow)

    private func shiftedLeftByte(_ low: UInt8) -> UInt256 {
        let w = words
        return UInt256(words: [w[0] << 8 | UInt64(low), w[1] << 8 | w[0] >> 56, w[2] << 8 | w[1] >> 56, w[3] << 8 | w[2] >> 56])
    }

    /// self × factor + addend, or nil past 2^256 - 1.
    public func multipliedAdding(_ factor: UInt64, _ addend: UInt64) -> UInt256? {
        var out = [UInt64](repeating: 0, count: 4)
        var carry = addend
        for (i, limb) in words.enumerated() {
            let (high, low) = limb.multipliedFullWidth(by: factor)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            out[i] = sum
            carry = high &+ (overflow ? 1 : 0)  // high ≤ 2^64 - 2, so this cannot wrap
        }
        return carry == 0 ? UInt256(words: out) : nil
    }

    public func adding(_ other: UInt256) -> UInt256? {
        var out = [UInt64](repeating: 0, count: 4)
        var carry = false
        for (i, (a, b)) in zip(words, other.words).enumerated() {
            let (s1, o1) = a.addingReportingOverflow(b)
            let (s2, o2) = s1.addingReportingOverflow(carry ? 1 : 0)
            out[i] = s2
            carry = o1 || o2
        }
        return carry ? nil : UInt256(words: out)
    }

    /// self - other, or nil when other is larger.
    public func subtracting(_ other: UInt256) -> UInt256? {
        guard self >= other else { return nil }
        var out = [UInt64](repeating: 0, count: 4)
        var borrow = false
        for (i, (a, b)) in zip(words, other.words).enumerated() {
            let (d1, o1) = a.subtractingReportingOverflow(b)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
            out[i] = d2
            borrow = o1 || o2
        }
        return UInt256(words: out)
    }

    /// Quotient and remainder by a non-zero small divisor.
    public func divided(by divisor: UInt64) -> (quotient: UInt256, remainder: UInt64) {
        precondition(divisor != 0, "callers divide by constants")
        var out = [UInt64](repeating: 0, count: 4)
        var remainder: UInt64 = 0
        for i in stride(from: 3, through: 0, by: -1) {
            // remainder < divisor, so the quotient fits in 64 bits and dividingFullWidth cannot trap.
            let (q, r) = divisor.dividingFullWidth((remainder, words[i]))
            out[i] = q
            remainder = r
        }
        return (UInt256(words: out), remainder)
    }

    /// 2^256 - self (mod 2^256): the two's complement, for negative EIP-712 integers.
    public var negated: UInt256 {
        let inverted = UInt256(words: words.map { ~$0 })
        return inverted.adding(UInt256(1)) ?? .zero  // only ~0 + 1 overflows, and -0 is 0
    }

    public static func < (lhs: UInt256, rhs: UInt256) -> Bool {
        for (a, b) in zip(lhs.words.reversed(), rhs.words.reversed()) where a != b { return a < b }
        return false
    }

    public static func == (lhs: UInt256, rhs: UInt256) -> Bool { lhs.words == rhs.words }
    public func hash(into hasher: inout Hasher) { hasher.combine(words) }

    // MARK: text

    /// Decimal digits.
    public var description: String {
        if isZero { return "0" }
        var digits = [UInt8]()
        var rest = self
        while !rest.isZero {
            let (q, r) = rest.divided(by: 10)
            digits.append(UInt8(ascii: "0") + UInt8(r))
            rest = q
        }
        return String(decoding: digits.reversed(), as: UTF8.self)
    }

    /// "0x" and the minimal hex digits ("0x0" for zero), as JSON-RPC writes quantities.
    public var hexString: String {
        let hex = Array(hexDigits(minimalBytes).utf8).drop { $0 == UInt8(ascii: "0") }
        return "0x" + (hex.isEmpty ? "0" : String(decoding: hex, as: UTF8.self))
    }

    /// Longest text `init(parsing:)` reads: 78 decimal digits or 0x + 64 hex digits, with room for leading zeros.
    public static let maxTextLength = 100

    /// Parses decimal digits or 0x-prefixed hex digits; no sign, spaces or underscores.
    public init(parsing text: String) throws {
        let utf8 = Array(text.utf8)
        guard utf8.count <= Self.maxTextLength else { throw QuantityError.tooLong(text.utf8.count) }
        guard !utf8.isEmpty else { throw QuantityError.empty }
        var value = UInt256.zero
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") {
            guard utf8.count > 2 else { throw QuantityError.empty }
            for (i, c) in utf8.enumerated().dropFirst(2) {
                guard let nibble = Hex.nibble(c) else { throw QuantityError.badDigit(position: i, hex: true) }
                guard let next = value.multipliedAdding(16, UInt64(nibble)) else { throw QuantityError.overflow(bits: 256) }
                value = next
            }
        } else {
            for (i, c) in utf8.enumerated() {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else { throw QuantityError.badDigit(position: i, hex: false) }
                guard let next = value.multipliedAdding(10, UInt64(c - UInt8(ascii: "0"))) else { throw QuantityError.overflow(bits: 256) }
                value = next
            }
        }
        self = value
    }
}

/// Text that is not an unsigned integer keyhost can read.
public enum QuantityError: Error, Equatable, CustomStringConvertible {
    case empty
    case tooLong(Int)
    case badDigit(position: Int, hex: Bool)
    case overflow(bits: Int)
    case negative

    public var description: String {
        switch self {
        case .empty: return "empty number; write decimal digits (\"21000\") or 0x-prefixed hex (\"0x5208\")"
        case .tooLong(let n): return "number of \(n) characters is over the \(UInt256.maxTextLength)-character limit"
        case .badDigit(let position, let hex):
            return hex ? "character at position \(position) is not a hex digit; use 0-9 and a-f after 0x"
                : "character at position \(position) is not a decimal digit; write decimal digits or 0x-prefixed hex, without sign, spaces or separators"
        case .overflow(let bits): return "number does not fit in \(bits) bits"
        case .negative: return "number is negative; this field takes a value of 0 or more"
        }
    }
}
