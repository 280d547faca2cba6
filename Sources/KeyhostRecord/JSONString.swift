/// JSON string literals for keyhost's three JSON writers (records, `JSONValue`, the CLI's `--json`), which differ
/// only in the characters they escape by name: each keeps the bytes it has always written.
public enum JSONString {
    /// Appends `text` quoted: `"` and `\` escaped, \n \r \t by name (and \b \f with `namingBackspaceAndFormFeed`),
    /// other controls below U+0020 (and U+007F with `escapingDelete`) as \u00xx.
    public static func append(_ text: String, to out: inout String, namingBackspaceAndFormFeed: Bool = false, escapingDelete: Bool = false) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}" where namingBackspaceAndFormFeed: out += "\\b"
            case "\u{c}" where namingBackspaceAndFormFeed: out += "\\f"
            case _ where scalar.value < 0x20 || (escapingDelete && scalar.value == 0x7F):
                let digits = Array("0123456789abcdef".utf8)
                out += "\\u00" + String(decoding: [digits[Int(scalar.value >> 4)], digits[Int(scalar.value & 15)]], as: UTF8.self)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
