/// One BER-TLV element (ISO 7816-4 / X.690 subset smart cards use): a tag of one or more bytes,
/// a definite length (short form, or long form 81/82/83/84) and the value bytes.
public struct TLV: Equatable, Sendable {
    /// The tag with all its bytes, big-endian (e.g. 0xA4, 0x5F20).
    public var tag: UInt32
    public var value: [UInt8]

    public init(tag: UInt32, value: [UInt8]) {
        self.tag = tag
        self.value = value
    }

    /// A constructed element whose value is the concatenated encodings of `children`.
    public init(tag: UInt32, children: [TLV]) {
        self.init(tag: tag, value: children.flatMap { $0.encoded() })
    }

    /// Bit 6 of the first tag byte: the value holds further TLV elements.
    public var isConstructed: Bool { TLV.tagBytes(tag).first.map { $0 & 0x20 != 0 } ?? false }

    /// The element's encoding with the shortest length form.
    public func encoded() -> [UInt8] {
        TLV.tagBytes(tag) + TLV.encodeLength(value.count) + value
    }

    /// The children of a constructed element.
    public func children() throws -> [TLV] { try TLV.parseAll(value) }

    /// The shortest definite length encoding: 00–7F, 81 xx, 82 xx xx, 83 xx xx xx, 84 xx xx xx xx.
    public static func encodeLength(_ length: Int) -> [UInt8] {
        precondition(length >= 0, "TLV length cannot be negative")
        if length < 0x80 { return [UInt8(length)] }
        let value = UInt64(length)
        var bytes: [UInt8] = []
        var rest = value
        while rest > 0 {
            bytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func tagBytes(_ tag: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = tag
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        } while rest > 0
        return bytes
    }

    /// Every element in `bytes`, which must be consumed exactly.
    public static func parseAll(_ bytes: [UInt8]) throws -> [TLV] {
        var offset = 0
        var out: [TLV] = []
        while offset < bytes.count {
            out.append(try parse(bytes, at: &offset))
        }
        return out
    }

    /// The element starting at `offset`; advances `offset` past it.
    public static func parse(_ bytes: [UInt8], at offset: inout Int) throws -> TLV {
        let header = try parseHeader(bytes, at: offset)
        let end = header.valueOffset + header.length
        guard end <= bytes.count else {
            throw TLVError.valueTruncated(tag: header.tag, declared: header.length, available: bytes.count - header.valueOffset)
        }
        offset = end
        return TLV(tag: header.tag, value: Array(bytes[header.valueOffset..<end]))
    }

    /// Tag, declared length and where the value starts, without checking that the value is all there.
    public static func parseHeader(_ bytes: [UInt8], at start: Int) throws -> (tag: UInt32, length: Int, valueOffset: Int) {
        var offset = start
        guard offset < bytes.count else { throw TLVError.truncatedHeader(offset: start) }
        var tag = UInt32(bytes[offset])
        offset += 1
        if tag & 0x1F == 0x1F {  // multi-byte tag: following bytes while bit 8 is set
            var more = true
            var count = 1
            while more {
                guard offset < bytes.count else { throw TLVError.truncatedHeader(offset: start) }
                guard count < 4 else { throw TLVError.tagTooLong(offset: start) }
                let b = bytes[offset]
                tag = tag << 8 | UInt32(b)
                more = b & 0x80 != 0
                offset += 1
                count += 1
            }
        }
        guard offset < bytes.count else { throw TLVError.truncatedHeader(offset: start) }
        let first = bytes[offset]
        offset += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard (1...4).contains(count) else { throw TLVError.unsupportedLengthForm(first, offset: offset - 1) }
            guard offset + count <= bytes.count else { throw TLVError.truncatedHeader(offset: start) }
            for i in 0..<count {
                length = length << 8 | Int(bytes[offset + i])  // widened to Int before shifting
            }
            offset += count
        }
        return (tag, length, offset)
    }
}

extension Array where Element == TLV {
    /// The first element with `tag`.
    public func first(tag: UInt32) -> TLV? { first { $0.tag == tag } }
}

/// BER-TLV bytes that cannot be parsed.
public enum TLVError: Error, Equatable, CustomStringConvertible {
    case truncatedHeader(offset: Int)
    case tagTooLong(offset: Int)
    case unsupportedLengthForm(UInt8, offset: Int)
    case valueTruncated(tag: UInt32, declared: Int, available: Int)
    case missingTag(UInt32, in: String)
    case badValueLength(tag: UInt32, length: Int, expected: String)

    public var description: String {
        switch self {
        case .truncatedHeader(let offset): return "TLV header at offset \(offset) is cut short"
        case .tagTooLong(let offset): return "TLV tag at offset \(offset) is longer than 4 bytes"
        case .unsupportedLengthForm(let b, let offset):
            return "TLV length byte 0x\(byteHex(b)) at offset \(offset) is not a definite length of 1-4 bytes"
        case .valueTruncated(let tag, let declared, let available):
            return "TLV tag 0x\(String(tag, radix: 16)) declares \(declared) bytes but \(available) remain"
        case .missingTag(let tag, let context): return "\(context) lacks TLV tag 0x\(String(tag, radix: 16))"
        case .badValueLength(let tag, let length, let expected):
            return "TLV tag 0x\(String(tag, radix: 16)) has \(length) bytes; expected \(expected)"
        }
    }
}
