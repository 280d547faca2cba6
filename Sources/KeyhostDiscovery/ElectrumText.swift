import KeyhostRecord

/// Server text made safe to show: control characters (a hostile server's terminal escapes) are escaped as
/// `TerminalText` escapes every echo, and long text is cut.
enum ElectrumText {
    static func shown(_ text: String, limit: Int = 120) -> String { TerminalText.shown(text, limit: limit) }
}
