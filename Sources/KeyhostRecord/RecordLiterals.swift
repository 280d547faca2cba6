/// Literal forms, so results read as the JSON they print: `["id": .bytes(id), "valid": true]`.
/// A dictionary literal keeps its order (Lua and JSON do not care; a reader of the code does).
extension Record: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(dictionaryLiteral elements: (String, Record)...) { self = .object(elements) }
    public init(arrayLiteral elements: Record...) { self = .array(elements) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }

    /// An unsigned amount: an integer, or its decimal text above 2^63-1 (Lua and JSON both lack a wider integer).
    public static func unsigned(_ value: UInt64) -> Record {
        value <= UInt64(Int64.max) ? .integer(Int64(value)) : .string(String(value))
    }

    /// An integer that always fits (counts, sizes, indexes).
    public static func count(_ value: Int) -> Record { .integer(Int64(value)) }

    /// Bytes, or null when absent.
    public static func bytes(_ value: [UInt8]?) -> Record { value.map { .bytes($0) } ?? .null }

    /// Text items.
    public static func strings(_ items: [String]) -> Record { .array(items.map { .string($0) }) }

    /// A copy with `name` set (replaced where present, else added at the end).
    public func setting(_ name: String, _ value: Record) -> Record {
        guard case .object(var fields) = self else { return self }
        if let i = fields.firstIndex(where: { $0.0 == name }) { fields[i].1 = value } else { fields.append((name, value)) }
        return .object(fields)
    }
}

extension Record {
    /// A parsed JSON document as a record: numbers that fit 64 bits as integers, wider ones (uint256 amounts,
    /// nonces above 2^63-1) as their decimal text, which a Double would round.
    public init(json value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let text): self = Int64(text).map(Record.integer) ?? .string(text)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(Record.init(json:)))
        case .object(let members): self = .object(members.map { ($0.key, Record(json: $0.value)) })
        }
    }
}
