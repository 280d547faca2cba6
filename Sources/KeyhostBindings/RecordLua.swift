import KeyhostRecord
import LuaRuntime

extension LuaValue {
    /// A record as Lua sees it: null fields are absent, bytes are byte strings.
    public init(record: Record) {
        switch record {
        case .null: self = .nil
        case .bool(let b): self = .boolean(b)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        case .string(let s): self = .text(s)
        case .bytes(let b): self = .string(b)
        case .array(let items): self = .table(LuaTable(array: items.map { LuaValue(record: $0) }))
        case .object(let fields):
            var table = LuaTable()
            for (name, value) in fields { table[name] = LuaValue(record: value) }
            self = .table(table)
        }
    }
}

extension Record {
    /// A Lua value as a record (structured errors' fields): strings that are not UTF-8 become bytes, tables with
    /// string keys objects, sequences arrays; functions and userdata have no record.
    public init?(lua value: LuaValue) {
        switch value {
        case .nil: self = .null
        case .boolean(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .number(let d): self = .number(d)
        case .string(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) { self = .string(text) } else { self = .bytes(bytes) }
        case .table(let table):
            if table.fields.isEmpty {
                self = .array(table.array.compactMap { Record(lua: $0) })
            } else {
                self = .object(table.fields.compactMap { key, value in
                    guard let name = key.stringValue, let record = Record(lua: value) else { return nil }
                    return (name, record)
                })
            }
        case .reference: return nil
        }
    }
}

/// Every structured error raises the same table in Lua as `--json` prints: kind and fields (null ones left out);
/// `LuaContext` adds `message`.
extension LuaErrorConvertible where Self: StructuredError {
    public var luaErrorFields: LuaTable {
        var table = LuaTable()
        guard case .object(let fields) = errorRecord else { return table }
        for (name, value) in fields where name != "message" { table[name] = LuaValue(record: value) }
        return table
    }
}
