/// The two NSString path operations PairingStore needs, on plain Strings: NSString is Foundation
/// proper (with ICU), which keyhost keeps off its modules.
public enum PathText {
    /// `path` without trailing slashes; "/" stays "/".
    private static func trimmed(_ path: String) -> Substring {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return text
    }

    /// Like NSString.deletingLastPathComponent: "/a/b" → "/a", "/a" → "/", "a" → "".
    public static func parent(_ path: String) -> String {
        let text = trimmed(path)
        guard let slash = text.lastIndex(of: "/") else { return "" }
        if slash == text.startIndex { return "/" }
        return String(trimmed(String(text[..<slash])))
    }

    /// Like NSString.lastPathComponent: "/a/b/" → "b", "/" → "/".
    public static func lastComponent(_ path: String) -> String {
        let text = trimmed(path)
        if text == "/" { return "/" }
        guard let slash = text.lastIndex(of: "/") else { return String(text) }
        return String(text[text.index(after: slash)...])
    }
}
