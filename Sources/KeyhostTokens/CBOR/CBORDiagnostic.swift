import KeyhostRecord

extension CBORValue {
    /// RFC 8949 §8 diagnostic notation, for showing metadata to people: `{"a": h'01', "b": [1, -2]}`.
    public var diagnostic: String {
        switch self {
        case .unsigned(let n): return String(n)
        case .negative(let n): return n == .max ? "-18446744073709551616" : "-" + String(n + 1)
        case .bytes(let b):
            let digits = Array("0123456789abcdef")
            return "h'" + String(b.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }) + "'"
        case .text(let t): return Self.quoted(t)
        case .array(let items): return "[" + items.map(\.diagnostic).joined(separator: ", ") + "]"
        case .map(let pairs): return "{" + pairs.map { $0.key.diagnostic + ": " + $0.value.diagnostic }.joined(separator: ", ") + "}"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where TerminalText.isControl(scalar):  // C1 too: a record is shown on terminals
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
