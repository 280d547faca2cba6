/// RFC 4648 base64, both alphabets keyhost writes: standard with padding (PSBTs, BIP174's text form; Bitcoin
/// signed messages) and URL-safe without padding (token armour). Decoding is strict: only the alphabet, padding
/// only where the standard form puts it, and for the URL form only canonical text (unused bits zero).
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardValues = values(standard)
    private static let urlValues = values(url)

    private static func values(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }

    /// Standard base64 with `=` padding.
    public static func encode(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standard, padding: true) }

    /// URL-safe base64 without padding.
    public static func encodeURL(_ bytes: [UInt8]) -> String { String(decoding: encodeURLBytes(bytes), as: UTF8.self) }

    /// The same as bytes, for a secret the caller wipes afterwards (a String's storage cannot be wiped).
    public static func encodeURLBytes(_ bytes: [UInt8]) -> [UInt8] { encodeBytes(bytes, alphabet: url, padding: false) }

    /// Standard base64: a multiple of 4 characters, at most two `=` at the end; whitespace around it (a file's
    /// trailing newline) is ignored. Nil for anything else.
    public static func decode<S: Collection>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        var body = Array(text)
        let space: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d]
        while let last = body.last, space.contains(last) { body.removeLast() }
        let start = body.firstIndex { !space.contains($0) } ?? body.endIndex
        body.removeSubrange(..<start)
        guard !body.isEmpty, body.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, body.last == UInt8(ascii: "=") { body.removeLast(); padding += 1 }
        return body.withUnsafeBufferPointer { decode($0, values: standardValues, canonical: false) }
    }

    /// URL-safe base64 without padding; nil for other characters, padding, a length no encoder writes, or
    /// unused bits that are not zero.
    @inlinable
    public static func decodeURL<S: Sequence>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        // Inlined so that the caller's collection is read as contiguous bytes here, and the loop
        // below is not generic (unspecialised, it cost a witness call per character).
        if let decoded = text.withContiguousStorageIfAvailable({ decodeURLBytes($0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decodeURLBytes($0) }
    }

    @usableFromInline
    static func decodeURLBytes(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(text, values: urlValues, canonical: true)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], padding: Bool) -> String {
        String(decoding: encodeBytes(bytes, alphabet: alphabet, padding: padding), as: UTF8.self)
    }

    private static func encodeBytes(_ bytes: [UInt8], alphabet: [UInt8], padding: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            for shift in [18, 12, 6].prefix(rest + 1) { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            if padding { out += [UInt8](repeating: UInt8(ascii: "="), count: 3 - rest) }
        }
        return out
    }

    private static func decode(_ text: UnsafeBufferPointer<UInt8>, values: [UInt8], canonical: Bool) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in text {
            let v = values[Int(c)]
            guard v != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // 6 leftover bits cannot come from any byte count.
        guard bits != 6, !canonical || accumulator == 0 else { return nil }
        return out
    }
}
