/// A Base58Check or Bech32 string that does not decode.
public enum EncodingError: Error, Equatable, CustomStringConvertible {
    /// A character outside the alphabet, at a 0-based position in the string.
    case badCharacter(position: Int, character: String, alphabet: String)
    /// The checksum does not match: the string was mistyped or truncated.
    case badChecksum(String)
    /// Upper and lower case mixed in one Bech32 string.
    case mixedCase
    /// The string (or its payload) has an impossible length.
    case badLength(String)
    /// A Bech32 string without the "1" separator, or with nothing before it.
    case missingSeparator
    /// The 5-bit to 8-bit regrouping left non-zero or more than 4 padding bits.
    case badPadding
    /// The input is longer than what the parser accepts; checked before any parsing.
    case tooLong(what: String, length: Int, limit: Int)

    public var description: String {
        switch self {
        case .badCharacter(let position, let character, let alphabet):
            return "character \(character) at position \(position) is not in the \(alphabet) alphabet; check for typos such as 0/O or l/1"
        case .badChecksum(let detail):
            return "bad checksum: \(detail); the string was mistyped or truncated, copy it again"
        case .mixedCase:
            return "mixed upper and lower case; Bech32 strings are either all lower or all upper case"
        case .badLength(let detail):
            return "bad length: \(detail)"
        case .missingSeparator:
            return "no human-readable part: a Bech32 string is <hrp>1<data>, e.g. bc1q..."
        case .badPadding:
            return "invalid padding in the data part; the string is not a valid encoding of whole bytes"
        case .tooLong(let what, let length, let limit):
            return "\(what) of \(length) characters is over the \(limit)-character limit; check that the right value was given"
        }
    }

    /// Describes one character for an error message, escaping anything that is not printable ASCII.
    static func show(_ scalar: Unicode.Scalar) -> String {
        (0x21...0x7e).contains(scalar.value) ? "\"\(Character(scalar))\"" : "U+\(String(scalar.value, radix: 16, uppercase: true))"
    }
}

/// Size limits every text parser checks before it parses, so hostile input fails at once with a clear error.
/// Each is well above the longest valid input (`utf8.count` is O(1) on native strings).
public enum InputLimit {
    /// Base58: the longest Base58Check keyhost reads is a 111/112-character extended key; decoding is quadratic.
    public static let base58 = 128
    /// Addresses of any kind (the longest, a Bech32 segwit address, is 90 characters; CashAddr with prefix 54).
    public static let address = 128
    /// A BIP39 phrase in UTF-8 (24 words of at most 8 letters, with room for spacing and NFKD accents).
    public static let mnemonic = 1024
    /// A derivation path (255 levels of up to 11 characters each).
    public static let derivationPath = 3072
    /// A Base64 Bitcoin signed-message signature (65 bytes are 88 characters).
    public static let base64Signature = 128
    /// Hex text decoded by `Hex.decode` (an extended APDU of 65,535 data bytes plus header and status).
    public static let hex = 2 * 65_546

    /// Throws `EncodingError.tooLong` when `text` is longer than `limit` (counted in UTF-8 bytes: at least
    /// the characters, and free to read).
    public static func check(_ text: String, _ limit: Int, what: String) throws {
        let length = text.utf8.count
        guard length <= limit else { throw EncodingError.tooLong(what: what, length: length, limit: limit) }
    }
}

/// Base58 and Base58Check (Bitcoin alphabet).
public enum Base58 {
    static let alphabet: [UInt8] = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    private static let indexes: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// Base58 text of `bytes` (leading zero bytes become leading "1"s).
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode(UnsafeRawBufferPointer($0)) }
    }

    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let zeros = bytes.prefix { $0 == 0 }.count
        // log(256)/log(58) < 1.366, so this many base-58 digits always suffice.
        let capacity = (bytes.count - zeros) * 138 / 100 + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { digits -> String in
            digits.initialize(repeating: 0)
            var length = 0
            for byte in bytes[zeros...] {
                var carry = Int(byte)
                var i = 0
                while i < length || carry != 0 {
                    let value = (i < length ? Int(digits[i]) << 8 : 0) + carry
                    digits[i] = UInt8(value % 58)
                    carry = value / 58
                    i += 1
                }
                length = i
            }
            return String(unsafeUninitializedCapacity: zeros + length) { out in
                for i in 0..<zeros { out[i] = alphabet[0] }
                for i in 0..<length { out[zeros + i] = alphabet[Int(digits[length - 1 - i])] }
                return zeros + length
            }
        }
    }

    /// Bytes of a Base58 string.
    public static func decode(_ text: String) throws -> [UInt8] {
        try InputLimit.check(text, InputLimit.base58, what: "a Base58 string")  // the decoding below is quadratic
        let scalars = Array(text.unicodeScalars)
        var zeros = 0
        while zeros < scalars.count && scalars[zeros] == "1" { zeros += 1 }
        var bytes = [UInt8]()  // little-endian big number
        bytes.reserveCapacity(scalars.count)
        for (position, scalar) in scalars.enumerated().dropFirst(zeros) {
            guard scalar.value < 128, case let digit = indexes[Int(scalar.value)], digit >= 0 else {
                throw EncodingError.badCharacter(position: position, character: EncodingError.show(scalar), alphabet: "Base58")
            }
            var carry = Int(digit)
            for i in 0..<bytes.count {
                let value = Int(bytes[i]) * 58 + carry
                bytes[i] = UInt8(value & 0xff)
                carry = value >> 8
            }
            while carry != 0 {
                bytes.append(UInt8(carry & 0xff))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }

    /// Base58Check: payload followed by the first 4 bytes of its double SHA-256.
    public static func encodeCheck(_ payload: [UInt8]) -> String {
        payload.withUnsafeBytes { encodeCheck(UnsafeRawBufferPointer($0)) }
    }

    static func encodeCheck(_ payload: UnsafeRawBufferPointer) -> String {
        withUnsafeTemporaryAllocation(byteCount: payload.count + 32, alignment: 8) { buffer in
            if payload.count > 0 { buffer.baseAddress!.copyMemory(from: payload.baseAddress!, byteCount: payload.count) }
            Hash.sha256d(payload, into: buffer.baseAddress! + payload.count)
            return encode(UnsafeRawBufferPointer(rebasing: buffer[0..<payload.count + 4]))
        }
    }

    /// The payload of a Base58Check string, its checksum verified.
    public static func decodeCheck(_ text: String) throws -> [UInt8] {
        let raw = try decode(text)
        guard raw.count >= 4 else {
            throw EncodingError.badLength("\(raw.count) bytes is too short to hold a 4-byte Base58Check checksum")
        }
        let payload = Array(raw[0..<raw.count - 4])
        guard Array(Hash.sha256d(payload)[0..<4]) == Array(raw[raw.count - 4..<raw.count]) else {
            throw EncodingError.badChecksum("the Base58Check checksum does not match")
        }
        return payload
    }
}
