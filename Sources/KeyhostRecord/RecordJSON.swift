/// JSON text for records, written without Foundation (errors must print even where nothing else does).
extension Record {
    /// JSON with object keys sorted; `pretty` indents by two spaces, one field per line.
    public func json(pretty: Bool = true) -> String {
        var out = ""
        write(to: &out, indent: pretty ? "" : nil)
        return out
    }

    private func write(to out: inout String, indent: String?) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d): out += d.isFinite ? "\(d)" : "null"
        case .string(let s): Record.quote(s, into: &out)
        case .bytes(let b): Record.quote(Record.hex(b), into: &out)
        case .array(let items):
            writeList(items.map { (nil, $0) }, open: "[", close: "]", into: &out, indent: indent)
        case .object(let fields):
            writeList(fields.sorted { $0.0 < $1.0 }.map { (Optional($0.0), $0.1) }, open: "{", close: "}", into: &out, indent: indent)
        }
    }

    private func writeList(_ items: [(String?, Record)], open: String, close: String, into out: inout String, indent: String?) {
        out += open
        guard !items.isEmpty else { out += close; return }
        let inner = indent.map { $0 + "  " }
        for (i, item) in items.enumerated() {
            if i > 0 { out += "," }
            if let inner { out += "\n" + inner } else if i > 0 { out += " " }
            if let key = item.0 {
                Record.quote(key, into: &out)
                out += ": "
            }
            item.1.write(to: &out, indent: inner)
        }
        if let indent { out += "\n" + indent }
        out += close
    }

    static func quote(_ text: String, into out: inout String) {
        JSONString.append(text, to: &out)
    }

    /// Lowercase hex without separators.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0F)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
