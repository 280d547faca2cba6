import KeyhostRecord
import KeyhostEthereum
import LuaRuntime

/// Lua values ↔ the JSON shape transactions and typed data are read from.
enum LuaJSON {
    static let maxDepth = 64

    /// Argument `i` as a table, copied raw: a metatable's `__name` (keyhost.json's `json.object`) does not matter.
    static func table(_ ctx: LuaContext, _ i: Int32, what: String) throws -> LuaTable {
        do { return try ctx.table(i) } catch {
            // A table that does not convert (a cycle, too deep) keeps its own error; anything else is the wrong type.
            switch try ctx.value(i) {
            case .table: throw error
            case .reference(let ref) where ref.typeName == "table": throw error
            default: throw LuaArgumentError(i, "\(what) table or JSON text expected, got \(ctx.typeName(i))")
            }
        }
    }

    static func json(_ value: LuaValue, position: Int32, what: String, path: String = "", depth: Int = 0) throws -> JSONValue {
        let at = path.isEmpty ? what : path
        guard depth <= maxDepth else { throw LuaArgumentError(position, "\(at): tables nest deeper than \(maxDepth) levels") }
        switch value {
        case .nil: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let n): return .number(String(n))
        case .number(let d):
            if let n = Int64(exactly: d) { return .number(String(n)) }
            throw LuaArgumentError(position, "\(at) is \(d), not an integer; write large or exact values as decimal strings")
        case .string(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw LuaArgumentError(position, "\(at) is a byte string that is not UTF-8 text; write bytes as 0x-hex text")
            }
            return .string(text)
        case .table(let table):
            if table.fields.isEmpty {
                return .array(try table.array.enumerated().map { i, item in
                    try json(item, position: position, what: what, path: "\(at)[\(i + 1)]", depth: depth + 1)
                })
            }
            guard table.array.isEmpty else { throw LuaArgumentError(position, "\(at) mixes a list and named fields; use one or the other") }
            var members = [JSONValue.Member]()
            for (key, item) in table.fields.sorted(by: { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }) {
                guard case .string = key, let name = key.stringValue else {
                    throw LuaArgumentError(position, "\(at) has a key of type \(key.typeName); use names (or a list 1…n)")
                }
                members.append(.init(name, try json(item, position: position, what: what, path: at + "." + name, depth: depth + 1)))
            }
            return .object(members)
        case .reference(let ref):
            if ref.typeName == "table" {
                // Nested tables with metatables stay references (keyhost.json marks objects, arrays and big numbers so).
                throw LuaArgumentError(position, "\(at) is a table with a metatable (keyhost.json makes them); pass the JSON text itself, "
                                       + "or plain tables")
            }
            throw LuaArgumentError(position, "\(at) is a \(ref.typeName); only strings, numbers, booleans and tables can be given")
        }
    }

    /// JSON numbers become Lua integers when they fit, else stay decimal strings.
    static func lua(_ value: JSONValue) -> LuaValue {
        switch value {
        case .null: return .nil
        case .bool(let b): return .boolean(b)
        case .number(let text): return Int64(text).map(LuaValue.integer) ?? .text(text)
        case .string(let s): return .text(s)
        case .array(let items): return .table(LuaTable(array: items.map(lua)))
        case .object(let members):
            var table = LuaTable()
            for member in members { table[member.key] = lua(member.value) }
            return .table(table)
        }
    }
}

/// Lua values ↔ RLP items: strings are byte strings, non-negative integers big-endian, tables lists.
enum RLPValues {
    static func item(_ value: LuaValue, position: Int32, depth: Int) throws -> RLPItem {
        guard depth <= RLP.defaultMaxDepth else { throw LuaArgumentError(position, "lists nest deeper than \(RLP.defaultMaxDepth) levels") }
        switch value {
        case .string(let bytes): return .bytes(bytes)
        case .integer(let n):
            guard n >= 0 else { throw LuaArgumentError(position, "RLP integers are 0 or more, got \(n)") }
            return .integer(UInt64(n))
        case .table(let table):
            guard table.fields.isEmpty else { throw LuaArgumentError(position, "an RLP list is a sequence {a, b, …}; it has named fields") }
            return .list(try table.array.map { try item($0, position: position, depth: depth + 1) })
        default:
            throw LuaArgumentError(position, "RLP encodes strings, non-negative integers and lists, got \(value.typeName)")
        }
    }

    static func lua(_ item: RLPItem) -> LuaValue {
        switch item {
        case .bytes(let bytes): return .string(bytes)
        case .list(let items): return .table(LuaTable(array: items.map(lua)))
        }
    }
}
