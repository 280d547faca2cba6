import CKeyhostLua
import CLua

/// Value conversion on a lua_State's stack.
///
/// Every call here is either non-raising in the Lua manual's sense ('-') or may only
/// raise a memory error ('m'), which the allocator never does while Swift runs
/// (see CKeyhostLua.h). Operations that can run metamethods go through kh_p_*.
struct LuaStack {
    let L: OpaquePointer

    /// The state's owner, looked up only when a reference is made or checked (not on every call).
    var owner: LuaState.Owner {
        Unmanaged<LuaState.Owner>.fromOpaque(kh_gethost(L).pointee.owner!).takeUnretainedValue()
    }

    /// Deepest table nesting converted either way; deeper is an error, not a crash.
    static let maxDepth = 200

    /// How much one conversion from Lua may produce. A table that holds the same sub-table
    /// twice is copied twice, so forty levels of `t = {t, t}` would otherwise become 2^40 copies.
    struct Budget {
        var values: Int
        var bytes: Int

        static let maxValues = 1_000_000
        static let maxBytes = 256 << 20

        /// The default budget, with bytes capped by the state's memory limit when it has one.
        init(L: OpaquePointer) {
            let limit = kh_gethost(L).pointee.limit
            values = Self.maxValues
            bytes = limit == 0 ? Self.maxBytes : min(Self.maxBytes, max(limit, 1 << 20))
        }

        mutating func charge(values n: Int = 1, bytes size: Int = 0) throws {
            values -= n
            bytes -= size
            if values < 0 {
                throw LuaError.runtime("value too large to convert: more than \(Self.maxValues) values (a table shared in several places counts each time)")
            }
            if bytes < 0 { throw LuaError.runtime("value too large to convert: its strings add up to more than the conversion limit") }
        }
    }

    var top: Int32 { lua_gettop(L) }

    func ensure(_ n: Int32) throws {
        guard lua_checkstack(L, n) != 0 else { throw LuaError.runtime("stack overflow (too many values)") }
    }

    // MARK: push

    func push(_ value: LuaValue) throws {
        try push(value, depth: 0)
    }

    private func push(_ value: LuaValue, depth: Int) throws {
        switch value {
        case .nil: lua_pushnil(L)
        case .boolean(let b): lua_pushboolean(L, b ? 1 : 0)
        case .integer(let i): lua_pushinteger(L, i)
        case .number(let d): lua_pushnumber(L, d)
        case .string(let bytes): pushBytes(bytes)
        case .reference(let ref):
            guard ref.owner === owner else { throw LuaError.runtime("a Lua value from another state cannot be used here") }
            lua_rawgeti(L, kh_registryindex(), lua_Integer(ref.ref))
        case .table(let table):
            guard depth < Self.maxDepth else { throw LuaError.runtime("table nested deeper than \(Self.maxDepth) levels") }
            try ensure(4)
            lua_createtable(L, Int32(clamping: table.array.count), Int32(clamping: table.fields.count))
            for (i, element) in table.array.enumerated() {
                try push(element, depth: depth + 1)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
            // In key order, not the dictionary's (seeded per process): where a key lands, and so
            // what `#` answers after the program changes the table, follows the insertion order.
            let fields = table.fields.filter { key, element in
                if case .number(let d) = key, d.isNaN { return false }
                return !key.isNil && !element.isNil
            }
            for (key, element) in fields.sorted(by: { LuaValue.insertionOrder($0.key, $1.key) }) {
                try push(key, depth: depth + 1)
                try push(element, depth: depth + 1)
                lua_rawset(L, -3)
            }
        }
    }

    func pushBytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buf.count, 1)) { _ = lua_pushlstring(L, $0, buf.count) }
        }
    }

    func pushText(_ text: String) {
        var text = text
        text.withUTF8 { buf in
            buf.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, buf.count) }
        }
    }

    // MARK: read

    func type(at index: Int32) -> Int32 { lua_type(L, index) }

    func typeName(at index: Int32) -> String {
        String(cString: lua_typename(L, lua_type(L, index)))
    }

    /// The name luaL_typeerror would use: `__name` of the metatable when it is a string.
    func argumentTypeName(at index: Int32) -> String {
        if lua_getmetatable(L, index) != 0 {
            pushText("__name")
            let t = lua_rawget(L, -2)
            defer { kh_pop(L, 2) }
            if t == LUA_TSTRING, let p = lua_tolstring(L, -1, nil) { return String(cString: p) }
        }
        if lua_type(L, index) == LUA_TLIGHTUSERDATA { return "light userdata" }
        return typeName(at: index)
    }

    /// The bytes of the string (or number, converted in place as Lua does) at index.
    func bytes(at index: Int32) -> [UInt8]? {
        let t = lua_type(L, index)
        guard t == LUA_TSTRING || t == LUA_TNUMBER else { return nil }
        var len = 0
        guard let p = lua_tolstring(L, index, &len) else { return nil }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) { Array(UnsafeBufferPointer(start: $0, count: len)) }
    }

    func value(at index: Int32) throws -> LuaValue {
        var budget = Budget(L: L)
        return try value(at: index, budget: &budget)
    }

    private func value(at index: Int32, budget: inout Budget) throws -> LuaValue {
        var seen: Set<UnsafeRawPointer> = []
        return try value(at: lua_absindex(L, index), depth: 0, seen: &seen, budget: &budget)
    }

    private func value(at index: Int32, depth: Int, seen: inout Set<UnsafeRawPointer>, budget: inout Budget) throws -> LuaValue {
        try budget.charge(bytes: lua_type(L, index) == LUA_TSTRING ? Int(lua_rawlen(L, index)) : 0)
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .integer(lua_tointegerx(L, index, nil)) }
            return .number(lua_tonumberx(L, index, nil))
        case LUA_TSTRING: return .string(bytes(at: index) ?? [])
        case LUA_TTABLE where lua_getmetatable(L, index) == 0:
            // Plain tables are copied; tables with metatables keep their behaviour by reference.
            return .table(try table(at: index, depth: depth, seen: &seen, budget: &budget))
        case LUA_TTABLE:
            kh_pop(L, 1)
            return .reference(reference(at: index))
        default:
            return .reference(reference(at: index))
        }
    }

    /// The table at index copied with raw access, whatever its metatable (an options table, say).
    func table(at index: Int32) throws -> LuaTable {
        var seen: Set<UnsafeRawPointer> = []
        var budget = Budget(L: L)
        return try table(at: lua_absindex(L, index), depth: 0, seen: &seen, budget: &budget)
    }

    private func table(at index: Int32, depth: Int, seen: inout Set<UnsafeRawPointer>, budget: inout Budget) throws -> LuaTable {
        guard depth < Self.maxDepth else { throw LuaError.runtime("table nested deeper than \(Self.maxDepth) levels") }
        guard let identity = lua_topointer(L, index) else { return LuaTable() }
        guard seen.insert(identity).inserted else { throw LuaError.runtime("table contains a cycle and cannot be converted") }
        defer { seen.remove(identity) }
        try ensure(4)
        var result = LuaTable()
        let n = lua_rawlen(L, index)
        if n > 0 {
            result.array.reserveCapacity(Int(min(n, 1 << 20)))
            for i in 1...n {
                lua_rawgeti(L, index, lua_Integer(i))
                defer { kh_pop(L, 1) }
                if lua_type(L, -1) == LUA_TNIL { break }
                result.array.append(try value(at: lua_absindex(L, -1), depth: depth + 1, seen: &seen, budget: &budget))
            }
        }
        let arrayCount = Int64(result.array.count)
        lua_pushnil(L)
        while true {
            var more: Int32 = 0
            let status = kh_p_next(L, index, &more)
            if status != LUA_OK {
                defer { kh_pop(L, 1) }
                throw LuaError.runtime("cannot iterate table: " + describe(at: -1))
            }
            guard more != 0 else { break }
            // stack: key value
            if lua_isinteger(L, -2) != 0 {
                let k = lua_tointegerx(L, -2, nil)
                if k >= 1 && k <= arrayCount { kh_pop(L, 1); continue }
            }
            let key = try value(at: lua_absindex(L, -2), depth: depth + 1, seen: &seen, budget: &budget)
            let element = try value(at: lua_absindex(L, -1), depth: depth + 1, seen: &seen, budget: &budget)
            result.fields[key] = element
            kh_pop(L, 1)
        }
        return result
    }

    /// The values between `base` (exclusive) and the top, converted: a call's results.
    func values(above base: Int32) throws -> [LuaValue] {
        let top = lua_gettop(L)
        guard top > base else { return [] }
        var budget = Budget(L: L)
        return try ((base + 1)...top).map { try value(at: $0, budget: &budget) }
    }

    func reference(at index: Int32) -> LuaReference {
        let name = typeName(at: index)
        lua_pushvalue(L, index)
        let ref = luaL_ref(L, kh_registryindex())
        return LuaReference(ref: ref, typeName: name, owner: owner)
    }

    /// `tostring(v)` with `__tostring` honoured, never raising into Swift.
    func describe(at index: Int32) -> String {
        guard lua_checkstack(L, 3) != 0 else { return "?" }
        let status = kh_p_tolstring(L, index)
        defer { kh_pop(L, 1) }
        let text = bytes(at: -1).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        return status == LUA_OK ? text : "(error in __tostring: \(text))"
    }
}

extension LuaValue {
    /// A total order on the keys a host table has (booleans, numbers, strings, then references
    /// by registry slot), so a table is built the same way in every process.
    static func insertionOrder(_ a: LuaValue, _ b: LuaValue) -> Bool {
        func rank(_ v: LuaValue) -> Int {
            switch v {
            case .nil: return 0
            case .boolean: return 1
            case .integer, .number: return 2
            case .string: return 3
            case .reference: return 4
            case .table: return 5
            }
        }
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb }
        switch (a, b) {
        case (.boolean(let x), .boolean(let y)): return !x && y
        case (.integer(let x), .integer(let y)): return x < y
        case (.number(let x), .number(let y)): return x < y
        case (.integer(let x), .number(let y)): return Double(x) < y || (Double(x) == y)
        case (.number(let x), .integer(let y)): return x < Double(y)
        case (.string(let x), .string(let y)): return x.lexicographicallyPrecedes(y)
        case (.reference(let x), .reference(let y)): return x.ref < y.ref
        default: return false
        }
    }
}
