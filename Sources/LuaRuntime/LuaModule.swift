import CKeyhostLua
import CLua

/// The contents of a native module, built when Lua first requires it.
public struct LuaModule {
    public let name: String
    private var functions: [(String, LuaFunctionBody)] = []
    private var values: [(String, LuaValue)] = []
    private var submodules: [(String, LuaModule)] = []

    init(name: String) { self.name = name }

    /// Adds `module.name(...)`.
    public mutating func function(_ name: String, _ body: @escaping LuaFunctionBody) {
        functions.append((name, body))
    }

    /// Adds a constant field.
    public mutating func value(_ name: String, _ value: LuaValue) {
        values.append((name, value))
    }

    /// Adds a table of functions and values, `module.name.f(...)` (e.g. `token.wallet.open`).
    public mutating func submodule(_ name: String, _ define: (inout LuaModule) -> Void) {
        var inner = LuaModule(name: self.name + "." + name)
        define(&inner)
        submodules.append((name, inner))
    }

    func push(on ctx: LuaContext) throws {
        try ctx.stack.ensure(4)
        lua_createtable(ctx.L, 0, Int32(functions.count + values.count + submodules.count))
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
        for (name, inner) in submodules {
            ctx.push(name)
            try inner.push(on: ctx)
            lua_rawset(ctx.L, -3)
        }
    }
}
