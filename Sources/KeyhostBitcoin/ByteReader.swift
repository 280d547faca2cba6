/// A cursor over bytes that never reads past the end: every read checks length first and fails with
/// the offset where the data ran out, so malformed input is an error, never a trap.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int
    /// What is being read, for messages ("PSBT", "transaction").
    let what: String
    let kind: PSBTError.Kind

    init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil, what: String, kind: PSBTError.Kind) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
        self.what = what
        self.kind = kind
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    func fail(_ message: String, at position: Int? = nil) -> PSBTError {
        PSBTError(kind, message, offset: position ?? offset)
    }

    mutating func byte() throws -> UInt8 {
        guard offset < end else { throw fail("the \(what) ends early: 1 more byte needed") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw fail("the \(what) ends early: \(count) bytes needed, \(remaining) left")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint32() throws -> UInt32 {
        let b = try bytes(4)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    mutating func uint64() throws -> UInt64 {
        let b = try bytes(8)
        var value: UInt64 = 0
        for i in (0..<8).reversed() { value = value << 8 | UInt64(b[i]) }
        return value
    }

    /// A Bitcoin CompactSize; non-minimal encodings are refused (Bitcoin Core does the same),
    /// and values above `limit` too, before anything is allocated for them.
    mutating func compactSize(limit: UInt64 = UInt64(Int32.max)) throws -> UInt64 {
        let start = offset
        let first = try byte()
        let value: UInt64
        switch first {
        case 0..<0xfd: value = UInt64(first)
        case 0xfd:
            let b = try bytes(2)
            value = UInt64(b[0]) | UInt64(b[1]) << 8
            guard value >= 0xfd else { throw fail("non-canonical compact size \(value) (0xfd form for a value below 0xfd)", at: start) }
        case 0xfe:
            value = UInt64(try uint32())
            guard value > 0xffff else { throw fail("non-canonical compact size \(value) (0xfe form for a value below 0x10000)", at: start) }
        default:
            value = try uint64()
            guard value > 0xffff_ffff else { throw fail("non-canonical compact size \(value) (0xff form for a value below 2^32)", at: start) }
        }
        guard value <= limit else { throw fail("compact size \(value) is above the limit \(limit)", at: start) }
        return value
    }

    /// A length-prefixed byte string whose length must fit in what is left.
    mutating func varBytes() throws -> [UInt8] {
        let start = offset
        let length = try compactSize(limit: UInt64(remaining))
        _ = start
        return try bytes(Int(length))
    }
}

/// Little-endian and CompactSize writers for serialization.
extension Array where Element == UInt8 {
    mutating func appendCompactSize(_ value: UInt64) {
        switch value {
        case 0..<0xfd: append(UInt8(value))
        case 0xfd...0xffff: append(0xfd); appendLE(value, bytes: 2)
        case 0x1_0000...0xffff_ffff: append(0xfe); appendLE(value, bytes: 4)
        default: append(0xff); appendLE(value, bytes: 8)
        }
    }

    mutating func appendCompactSize(_ value: Int) { appendCompactSize(UInt64(value)) }

    mutating func appendLE(_ value: UInt64, bytes count: Int) {
        for i in 0..<count { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    mutating func appendUInt32(_ value: UInt32) { appendLE(UInt64(value), bytes: 4) }
    mutating func appendUInt64(_ value: UInt64) { appendLE(value, bytes: 8) }

    mutating func appendVarBytes(_ bytes: [UInt8]) {
        appendCompactSize(bytes.count)
        append(contentsOf: bytes)
    }
}

enum LE {
    static func uint32(_ b: [UInt8]) -> UInt32? {
        guard b.count == 4 else { return nil }
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    static func uint64(_ b: [UInt8]) -> UInt64? {
        guard b.count == 8 else { return nil }
        var value: UInt64 = 0
        for i in (0..<8).reversed() { value = value << 8 | UInt64(b[i]) }
        return value
    }

    static func bytes(_ value: UInt32) -> [UInt8] { var out = [UInt8](); out.appendUInt32(value); return out }
    static func bytes(_ value: UInt64) -> [UInt8] { var out = [UInt8](); out.appendUInt64(value); return out }
}
