/// Text from outside keyhost (a server's message, a job file's id, a card's name, a label, a token's record)
/// made safe to show on a terminal, one rule for every such echo: every C0 control, DEL and C1 control is
/// written as `\xHH`, so no escape sequence (ESC, CSI U+009B, OSC…) reaches the terminal to move the cursor,
/// retitle the window or hide what follows. Everything else, a backslash included, is shown as it is.
public enum TerminalText {
    /// `text` with its control characters escaped; `keepingLineBreaks` leaves LF and TAB (for multi-line
    /// messages whose own layout is keyhost's).
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && !(keepingLineBreaks && ($0 == "\n" || $0 == "\t")) }) else {
            return text
        }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) && !(keepingLineBreaks && (scalar == "\n" || scalar == "\t")) {
                out += hex(scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `escaped` cut to `limit` characters (of the text before escaping), with "…" when cut.
    public static func shown(_ text: String, limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return escaped(text) }
        var prefix = String.UnicodeScalarView()
        prefix.append(contentsOf: scalars.prefix(max(0, limit)))
        return escaped(String(prefix)) + "…"
    }

    /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return "\\x" + String(decoding: [digits[Int(value >> 4 & 15)], digits[Int(value & 15)]], as: UTF8.self)
    }
}
