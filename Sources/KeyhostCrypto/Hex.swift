/// Hexadecimal encoding and decoding of byte arrays.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`, without a prefix.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of a hex string (either case, optional "0x" prefix).
    public static func decode(_ text: String) throws -> [UInt8] {
        try InputLimit.check(text, InputLimit.hex, what: "a hex string")
        var utf8 = Array(text.utf8)
        var offset = 0
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") {
            utf8.removeFirst(2)
            offset = 2
        }
        guard utf8.count % 2 == 0 else { throw HexError.oddLength(utf8.count) }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = nibble(utf8[i]) else { throw HexError.badCharacter(position: i + offset, character: character(utf8, i)) }
            guard let lo = nibble(utf8[i + 1]) else { throw HexError.badCharacter(position: i + 1 + offset, character: character(utf8, i + 1)) }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The value of one hex digit (either case).
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // Reports the byte as a character only when it is printable ASCII; a UTF-8 fragment would print as garbage.
    private static func character(_ utf8: [UInt8], _ i: Int) -> String {
        let c = utf8[i]
        return (0x21...0x7e).contains(c) ? String(UnicodeScalar(c)) : "byte 0x" + encode([c])
    }
}

/// A string that is not valid hexadecimal.
public enum HexError: Error, Equatable, CustomStringConvertible {
    case oddLength(Int)
    case badCharacter(position: Int, character: String)

    public var description: String {
        switch self {
        case .oddLength(let n):
            return "invalid hex: \(n) digits is an odd count; each byte needs two hex digits"
        case .badCharacter(let position, let character):
            return "invalid hex: character \(character) at position \(position) is not a hex digit; use 0-9 and a-f"
        }
    }
}
