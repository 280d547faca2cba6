/// The small part of DER (X.690) an X.509 certificate with an EC key needs: definite lengths, tag-length-value
/// writing, and a bounded reader that refuses anything it cannot walk.
enum DER {
    static let sequence: UInt8 = 0x30
    static let set: UInt8 = 0x31
    static let integer: UInt8 = 0x02
    static let bitString: UInt8 = 0x03
    static let octetString: UInt8 = 0x04
    static let objectIdentifier: UInt8 = 0x06
    static let utf8String: UInt8 = 0x0C
    static let utcTime: UInt8 = 0x17

    /// One TLV.
    static func tlv(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
        [tag] + length(value.count) + value
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        if count <= 0xFF { return [0x81, UInt8(count)] }
        return [0x82, UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)]
    }

    /// A non-negative INTEGER from big-endian bytes.
    static func unsignedInteger(_ bytes: [UInt8]) -> [UInt8] {
        var value = Array(bytes.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return tlv(integer, value)
    }

    /// One element read: its tag, its value, and its whole encoding.
    struct Element {
        let tag: UInt8
        let value: ArraySlice<UInt8>
        let encoded: ArraySlice<UInt8>
    }

    /// Walks the elements of one level; every length is checked against what is left.
    struct Reader {
        let bytes: ArraySlice<UInt8>
        private var position: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position >= bytes.endIndex }

        mutating func next() throws -> Element {
            let start = position
            guard bytes.endIndex - position >= 2 else { throw DERError("truncated element") }
            let tag = bytes[position]
            guard tag & 0x1F != 0x1F else { throw DERError("multi-byte tags are not supported") }
            var length = Int(bytes[position + 1])
            position += 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard (1...2).contains(count), bytes.endIndex - position >= count else { throw DERError("bad length") }
                length = 0
                for _ in 0..<count { length = length << 8 | Int(bytes[position]); position += 1 }
            }
            guard length <= bytes.endIndex - position else { throw DERError("length \(length) beyond the data") }
            let value = bytes[position..<(position + length)]
            position += length
            return Element(tag: tag, value: value, encoded: bytes[start..<position])
        }

        mutating func next(_ tag: UInt8, _ what: String) throws -> Element {
            let element = try next()
            guard element.tag == tag else {
                throw DERError("\(what): tag \(String(element.tag, radix: 16)) where \(String(tag, radix: 16)) was expected")
            }
            return element
        }
    }
}

/// A certificate that cannot be read, and why.
struct DERError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
