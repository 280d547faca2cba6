/// Standard base64 (RFC 4648, with padding), the text form BIP174 gives PSBTs. Decoding is strict:
/// only the alphabet, padding at the end, and surrounding whitespace (a trailing newline in a file).
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    static func decode(_ text: [UInt8]) -> [UInt8]? {
        let space: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d]
        var start = 0, end = text.count
        while start < end, space.contains(text[start]) { start += 1 }
        while end > start, space.contains(text[end - 1]) { end -= 1 }
        let body = text[start..<end]
        guard !body.isEmpty, body.count % 4 == 0 else { return nil }
        var padding = 0
        if body.last == UInt8(ascii: "=") { padding += 1 }
        if body.count >= 2, body[body.endIndex - 2] == UInt8(ascii: "=") { padding += 1 }
        var out = [UInt8]()
        out.reserveCapacity(body.count / 4 * 3)
        var quad = [UInt8](repeating: 0, count: 4)
        var index = body.startIndex
        while index < body.endIndex {
            let isLast = index + 4 == body.endIndex
            for j in 0..<4 {
                let c = body[index + j]
                if isLast && j >= 4 - padding {
                    quad[j] = 0
                } else {
                    guard let v = value(c) else { return nil }
                    quad[j] = v
                }
            }
            out.append(quad[0] << 2 | quad[1] >> 4)
            if !(isLast && padding == 2) { out.append((quad[1] & 0x0f) << 4 | quad[2] >> 2) }
            if !(isLast && padding >= 1) { out.append((quad[2] & 0x03) << 6 | quad[3]) }
            index += 4
        }
        return out
    }
}
