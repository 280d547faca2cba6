/// A Lua value converted to Swift. Functions, userdata and threads stay in Lua and are held by reference.
public enum LuaValue: Hashable, Sendable {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    /// Lua strings are byte strings; text is UTF-8 by convention only.
    case string([UInt8])
    case table(LuaTable)
    case reference(LuaReference)

    /// A Lua string holding the UTF-8 bytes of `text`.
    public static func text(_ text: String) -> LuaValue { .string(Array(text.utf8)) }

    /// The value as text when it is a string (invalid UTF-8 is repaired with U+FFFD).
    public var stringValue: String? {
        if case .string(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    public var isNil: Bool { if case .nil = self { return true } else { return false } }

    /// Lua's name for the value's type, as `type()` reports it.
    public var typeName: String {
        switch self {
        case .nil: return "nil"
        case .boolean: return "boolean"
        case .integer, .number: return "number"
        case .string: return "string"
        case .table: return "table"
        case .reference(let ref): return ref.typeName
        }
    }
}

extension LuaValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(nilLiteral: ()) { self = .nil }
}

/// A Lua table converted to Swift: its sequence 1...n and its other fields.
public struct LuaTable: Hashable, Sendable {
    public var array: [LuaValue]
    public var fields: [LuaValue: LuaValue]

    public init(array: [LuaValue] = [], fields: [LuaValue: LuaValue] = [:]) {
        self.array = array
        self.fields = fields
    }

    /// A table with string keys, the usual shape of a result record.
    public init(_ record: KeyValuePairs<String, LuaValue>) {
        self.init()
        for (key, value) in record where !value.isNil { fields[.text(key)] = value }
    }

    public subscript(key: String) -> LuaValue {
        get { fields[.text(key)] ?? .nil }
        set { fields[.text(key)] = newValue.isNil ? nil : newValue }
    }

    public subscript(index: Int) -> LuaValue {
        index >= 1 && index <= array.count ? array[index - 1] : (fields[.integer(Int64(index))] ?? .nil)
    }
}
