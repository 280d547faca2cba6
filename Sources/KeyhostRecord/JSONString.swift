/// JSON string literals, one rule for every JSON keyhost writes (results, errors, requests to servers):
/// `"` and `\` escaped, \n \r \t by name, every other control character (C0, DEL and C1) as \u00xx, so
/// no terminal control character ever reaches a reader unescaped.
public enum JSONString {
    /// Appends `text` quoted.
    public static func append(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where TerminalText.isControl(scalar):
                let digits = Array("0123456789abcdef".utf8)
                out += "\\u00" + String(decoding: [digits[Int(scalar.value >> 4)], digits[Int(scalar.value & 15)]], as: UTF8.self)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
