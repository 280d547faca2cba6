/// A JSON document, read strictly and with limits (transactions, EIP-712, state files, HTTP answers).
///
/// Numbers keep their text: a uint256 written as a JSON number must not pass through a Double.
/// Objects keep their members in order (EIP-712 never depends on it, but messages read better).
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number exactly as written (`-12`, `1e3`, `0.5`); readers decide what they accept.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Hashable, Sendable {
        public let key: String
        public let value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The members of an object; an empty array counts as an empty object, because an empty Lua table is both.
    public var objectMembers: [Member]? {
        switch self {
        case .object(let members): return members
        case .array(let items) where items.isEmpty: return []
        default: return nil
        }
    }

    /// The text of a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The items of an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// A number that is a whole number within Int's range, however written (`7`, `7.0`, `7e0`).
    public var integerValue: Int? {
        guard case .number(let text) = self else { return nil }
        if let exact = Int(text) { return exact }
        guard let value = Double(text), value == value.rounded(), value >= -0x1p63, value < 0x1p63 else { return nil }
        return Int(value)
    }

    /// For messages: a string as its text, anything else as compact JSON.
    public var plainText: String {
        if case .string(let text) = self { return text }
        return rendered
    }

    /// JSON's name for the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Default limits: a document of 1 MiB nested 64 deep is far beyond any transaction or EIP-712 message.
    public static let defaultMaxBytes = 1 << 20
    public static let defaultMaxDepth = 64

    /// Parses strict RFC 8259 JSON (no comments, trailing commas or duplicate keys).
    public static func parse(_ bytes: [UInt8], maxBytes: Int = defaultMaxBytes, maxDepth: Int = defaultMaxDepth) throws -> JSONValue {
        guard bytes.count <= maxBytes else { throw JSONError(offset: 0, problem: "the document of \(bytes.count) bytes is over the \(maxBytes)-byte limit") }
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == bytes.count else { throw parser.error("unexpected text after the document") }
        return value
    }

    /// Renders compact JSON (numbers as written, strings escaped).
    public var rendered: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let text): return text
        case .string(let s): return JSONValue.quote(s)
        case .array(let items): return "[" + items.map(\.rendered).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { JSONValue.quote($0.key) + ":" + $0.value.rendered }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = ""
        JSONString.append(s, to: &out)
        return out
    }
}

/// JSON that does not parse, with the byte offset.
public struct JSONError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let problem: String
    public var description: String { "invalid JSON at byte \(offset): \(problem)" }
    public var kind: String { "invalid_json" }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var position = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ problem: String) -> JSONError { JSONError(offset: position, problem: problem) }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[position]) { position += 1 }
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func value(depth: Int) throws -> JSONValue {
        guard let c = current else { throw error("the document ends where a value should be") }
        switch c {
        case UInt8(ascii: "{"):
            guard depth < maxDepth else { throw error("objects and arrays nest deeper than \(maxDepth) levels") }
            position += 1
            var members = [JSONValue.Member]()
            var seen = Set<String>()
            skipSpace()
            if current == UInt8(ascii: "}") { position += 1; return .object(members) }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a quoted member name") }
                let keyStart = position
                let key = try string()
                guard seen.insert(key).inserted else { throw JSONError(offset: keyStart, problem: "duplicate member \(JSONValue.quote(key))") }
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':' after member name") }
                position += 1
                skipSpace()
                members.append(JSONValue.Member(key, try value(depth: depth + 1)))
                skipSpace()
                if current == UInt8(ascii: ",") { position += 1; continue }
                if current == UInt8(ascii: "}") { position += 1; return .object(members) }
                throw error("expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            guard depth < maxDepth else { throw error("objects and arrays nest deeper than \(maxDepth) levels") }
            position += 1
            var items = [JSONValue]()
            skipSpace()
            if current == UInt8(ascii: "]") { position += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") { position += 1; continue }
                if current == UInt8(ascii: "]") { position += 1; return .array(items) }
                throw error("expected ',' or ']' in an array")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        default:
            throw error("unexpected character; expected a value")
        }
    }

    mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard position + w.count <= bytes.count, Array(bytes[position..<position + w.count]) == w else { throw error("unknown literal; expected \(word)") }
        position += w.count
    }

    mutating func number() throws -> String {
        let start = position
        func digits() -> Int {
            let s = position
            while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { position += 1 }
            return position - s
        }
        if current == UInt8(ascii: "-") { position += 1 }
        let intStart = position
        let n = digits()
        guard n > 0 else { throw error("a number needs digits") }
        if n > 1, bytes[intStart] == UInt8(ascii: "0") { throw JSONError(offset: intStart, problem: "a number must not have leading zeros") }
        if current == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw error("a decimal point needs digits after it") }
        }
        if let c = current, c | 0x20 == UInt8(ascii: "e") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw error("an exponent needs digits") }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    mutating func string() throws -> String {
        position += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = position
        func flush() throws {
            guard runStart < position else { return }
            guard let text = String(validating: bytes[runStart..<position], as: UTF8.self) else {
                throw JSONError(offset: runStart, problem: "a string is not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard let c = current else { throw error("a string is not closed; add the closing quote") }
            if c == UInt8(ascii: "\"") {
                if scalars.isEmpty {
                    // No escape in it (a chain's armour, most keys): the run is the string.
                    guard let text = String(validating: bytes[runStart..<position], as: UTF8.self) else {
                        throw JSONError(offset: runStart, problem: "a string is not valid UTF-8")
                    }
                    position += 1
                    return text
                }
                try flush()
                position += 1
                return String(scalars)
            }
            if c < 0x20 { throw error("a control character must be escaped inside a string") }
            if c != UInt8(ascii: "\\") { position += 1; continue }
            try flush()
            position += 1
            guard let e = current else { throw error("a string ends inside an escape") }
            position += 1
            switch e {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else {
                        throw error("a high surrogate escape must be followed by a low surrogate escape")
                    }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("a high surrogate escape must be followed by a low surrogate escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("a lone surrogate escape is not a character") }
                scalars.append(scalar)
            default:
                throw JSONError(offset: position - 1, problem: "unknown escape; use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX")
            }
            runStart = position
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("\\u needs four hex digits") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let n = jsonHexNibble(bytes[position]) else { throw error("\\u needs four hex digits") }
            code = code << 4 | UInt32(n)
            position += 1
        }
        return code
    }
}

private func jsonHexNibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

extension JSONError: StructuredError {
    public var errorKind: String { kind }
    public var errorFields: [(String, Record)] { [("offset", .integer(Int64(offset)))] }
}
