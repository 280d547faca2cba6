/// Trimming as Foundation's `trimmingCharacters(in: .whitespaces / .whitespacesAndNewlines)` does it,
/// without Foundation (which keyhost keeps off the modules every run loads).
extension String {
    /// Unicode category Zs, tab and U+200B: CharacterSet.whitespaces. (CoreFoundation keeps ZERO
    /// WIDTH SPACE from Unicode versions where it was Zs; tests compare every scalar with Foundation.)
    public static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// Category Z*, U+000A…U+000D, U+0085 and, as above, U+200B: CharacterSet.whitespacesAndNewlines.
    public static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x85, 0x200B: return true
        default:
            switch scalar.properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }

    /// The string without leading and trailing scalars for which `drop` holds.
    public func trimming(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        // A non-dropped scalar exists, so lastIndex finds one at or after `first`.
        let last = scalars.lastIndex(where: { !drop($0) }) ?? first
        return String(scalars[first...last])
    }
}

extension StringProtocol {
    /// `trimmingCharacters(in: .whitespaces)`.
    public func trimmingWhitespace() -> String { String(self).trimming(String.isWhitespace) }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    public func trimmingWhitespaceAndNewlines() -> String { String(self).trimming(String.isWhitespaceOrNewline) }
}
