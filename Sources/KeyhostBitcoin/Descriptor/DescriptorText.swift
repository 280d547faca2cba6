/// Short, safe quotations of descriptor text for error messages.
enum DescriptorText {
    /// The character starting at byte `i`, quoted, or U+XXXX when it is not printable ASCII.
    static func show(_ bytes: [UInt8], at i: Int) -> String {
        let byte = bytes[i]
        if (0x21...0x7e).contains(byte) { return "\"\(Character(Unicode.Scalar(byte)))\"" }
        if byte == 0x20 { return "\" \" (space)" }
        // Decode the one scalar at i (the bytes are a Swift String's valid UTF-8).
        let end = min(bytes.count, i + 4)
        let scalar = String(decoding: bytes[i..<end], as: UTF8.self).unicodeScalars.first
        return "U+" + String(scalar?.value ?? UInt32(byte), radix: 16, uppercase: true)
    }

    /// At most `limit` characters from `start`, quoted, with … when cut (never a whole key).
    static func excerpt(_ bytes: ArraySlice<UInt8>, limit: Int = 16) -> String {
        let cut = bytes.prefix(limit)
        return "\"" + String(decoding: cut, as: UTF8.self) + (bytes.count > limit ? "…" : "") + "\""
    }
}
