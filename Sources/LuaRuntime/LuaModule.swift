import CKeyhostLua
import CLua

/// The contents of a native module, built when Lua first requires it.
public struct LuaModule {
    public let name: String
    private var functions: [(String, LuaFunctionBody)] = []
    private var values: [(String, LuaValue)] = []

    init(name: String) { self.name = name }

    /// Adds `module.name(...)`.
    public mutating func function(_ name: String, _ body: @escaping LuaFunctionBody) {
        functions.append((name, body))
    }

    /// Adds a constant field.
    public mutating func value(_ name: String, _ value: LuaValue) {
        values.append((name, value))
    }

    func push(on ctx: LuaContext) throws {
        lua_createtable(ctx.L, 0, Int32(functions.count + values.count))
        for (name, body) in functions {
            ctx.push(name)
            ctx.push(function: body)
            lua_rawset(ctx.L, -3)
        }
        for (name, value) in values {
            ctx.push(name)
            try ctx.push(value)
            lua_rawset(ctx.L, -3)
        }
    }
}
