import KeyhostCrypto

// Hex for Ethereum's byte fields: 0x-prefixed, lower-case on output (digits are read with KeyhostCrypto's Hex.nibble).

private let hexAlphabet = Array("0123456789abcdef".utf8)

/// Lower-case hex without prefix.
func hexDigits<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(hexAlphabet[Int(b >> 4)])
        out.append(hexAlphabet[Int(b & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// "0x" + lower-case hex.
public func hex0x<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 { "0x" + hexDigits(bytes) }

/// 0x-prefixed hex for byte fields, with its own limit (KeyhostCrypto's Hex is sized for APDUs).
public enum EthHex {
    public static let maxDigits = 2 * (1 << 20)

    public static func decode(_ text: String) throws -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count <= maxDigits + 2 else { throw EthHexError("is \(utf8.count) characters, over the \(maxDigits + 2)-character limit") }
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") else {
            throw EthHexError("must start with 0x (write bytes as 0x-prefixed hex, \"0x\" for none)")
        }
        guard utf8.count % 2 == 0 else { throw EthHexError("has an odd number of hex digits; each byte needs two") }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2 - 1)
        var i = 2
        while i < utf8.count {
            guard let hi = Hex.nibble(utf8[i]), let lo = Hex.nibble(utf8[i + 1]) else {
                throw EthHexError("has a non-hex character at position \(Hex.nibble(utf8[i]) == nil ? i : i + 1); use 0-9 and a-f")
            }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

public struct EthHexError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
