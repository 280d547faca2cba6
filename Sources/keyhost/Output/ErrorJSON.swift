import LuaRuntime

/// An error as the JSON object `--json` prints on standard error: `{"error": {"kind", "message", …fields}}`.
///
/// The fields are the structured error's own (`sw`, `sw_name`, `retries_left`, `command`, …) under the names
/// Lua sees; byte strings become hex. Written without Foundation: errors must print even where nothing else works.
enum ErrorJSON {
    static func document(for error: Error) -> String {
        var fields: [(String, JSONText)] = []
        switch error {
        case let error as Failure:
            if case .kind(let kind, _) = error { fields.append(("kind", .string(kind))) } else { fields.append(("kind", .string("failed"))) }
        case let error as LuaError:
            fields.append(("kind", .string(kind(of: error))))
        case let error as LuaErrorConvertible:
            let table = error.luaErrorFields
            for (key, value) in table.fields {
                guard let name = key.stringValue, name != "message", let json = JSONText(value) else { continue }
                fields.append((name, json))
            }
            if !fields.contains(where: { $0.0 == "kind" }) { fields.append(("kind", .string("failed"))) }
        default:
            fields.append(("kind", .string("failed")))
        }
        let message: String
        switch error {
        case let error as CustomStringConvertible: message = error.description
        default: message = String(describing: error)
        }
        fields.append(("message", .string(message)))
        return JSONText.object([("error", .object(fields))]).rendered
    }

    static func usage(_ message: String) -> String {
        JSONText.object([("error", .object([("kind", .string("usage")), ("message", .string(message))]))]).rendered
    }

    private static func kind(of error: LuaError) -> String {
        switch error {
        case .syntax: return "syntax"
        case .runtime: return "lua_error"
        case .memoryLimit: return "memory_limit"
        case .instructionBudget: return "instruction_limit"
        case .timeLimit: return "time_limit"
        case .interrupted: return "interrupted"
        case .setup: return "setup"
        }
    }
}

/// A JSON value rendered without Foundation: keys keep their order, sorted where the caller sorts them.
enum JSONText {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])

    /// A Lua value as JSON: strings that are not UTF-8 become hex, tables become arrays or objects (keys sorted).
    init?(_ value: LuaValue) {
        switch value {
        case .nil: self = .null
        case .boolean(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        case .string(let bytes):
            if let text = String(validatingUTF8Bytes: bytes) { self = .string(text) } else { self = .string(JSONText.hex(bytes)) }
        case .table(let table):
            if table.fields.isEmpty {
                self = .array(table.array.compactMap { JSONText($0) })
            } else {
                let pairs = table.fields.compactMap { key, value -> (String, JSONText)? in
                    guard let name = key.stringValue, let json = JSONText(value) else { return nil }
                    return (name, json)
                }
                self = .object(pairs.sorted { $0.0 < $1.0 })
            }
        case .reference: return nil
        }
    }

    var rendered: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d): out += d.isFinite ? "\(d)" : "null"
        case .string(let s): JSONText.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += ", " }
                item.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out += ", " }
                JSONText.quote(pair.0, into: &out)
                out += ": "
                pair.1.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let digits = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var out = ""
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0F)]) }
        return out
    }
}

extension String {
    /// The text when `bytes` are valid UTF-8, else nil.
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var text = ""
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: self = text; return
            case .error: return nil
            }
        }
    }
}
