/// Server text made safe to show: control characters (a hostile server's terminal escapes) become "�",
/// and long text is cut.
enum ElectrumText {
    static func shown(_ text: String, limit: Int = 120) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            out.unicodeScalars.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "\u{FFFD}" : scalar)
        }
        return text.unicodeScalars.count > limit ? out + "…" : out
    }
}
