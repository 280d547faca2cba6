import CKeyhostLua
import CLua

/// A method of a Swift object exposed to Lua; argument 1 is the object itself.
public typealias LuaMethod<T> = (T, LuaContext) throws -> Int32

/// A Swift class whose instances Lua holds as userdata with methods,
/// `__name`, `__tostring`, `__close` and `__gc`.
public protocol LuaObject: AnyObject {
    /// The metatable's `__name`, e.g. `keyhost.hd.node`; Lua's type errors use it.
    static var luaTypeName: String { get }
    /// Methods reachable as `obj:name(...)`.
    static var luaMethods: [String: LuaMethod<Self>] { get }
    /// What `tostring(obj)` shows; never a secret.
    var luaDescription: String { get }
    /// Releases what the object holds; called by `__close` and `obj:close()`.
    func luaClose()
}

extension LuaObject {
    public func luaClose() {}
}

enum LuaObjectSupport {
    static func push<T: LuaObject>(_ object: T, on L: OpaquePointer) {
        let box = Unmanaged.passRetained(object as AnyObject).toOpaque()
        var created: Int32 = 0
        T.luaTypeName.withCString { kh_push_object(L, box, $0, &created) }
        if created != 0 {
            lua_getmetatable(L, -1)
            fill(metatableOf: T.self, on: L)
            kh_pop(L, 1)
        }
    }

    /// Called once per type, when its first object is pushed.
    private static func fill<T: LuaObject>(metatableOf type: T.Type, on L: OpaquePointer) {
        let stack = LuaStack(L: L)
        func set(_ name: String, _ body: @escaping LuaFunctionBody) {
            stack.pushText(name)
            LuaDispatch.push(body, on: L)
            lua_rawset(L, -3)
        }
        let close: LuaFunctionBody = { ctx in
            guard let box = T.luaTypeName.withCString({ kh_detach_object(ctx.L, 1, $0) }) else { return 0 }
            let object = Unmanaged<AnyObject>.fromOpaque(box)
            (object.takeUnretainedValue() as? T)?.luaClose()
            object.release()
            return 0
        }
        stack.pushText("__index")
        lua_createtable(L, 0, Int32(T.luaMethods.count + 1))
        for (name, method) in T.luaMethods {
            set(name) { ctx in try method(try ctx.object(1, as: T.self), ctx) }
        }
        if T.luaMethods["close"] == nil { set("close", close) }
        lua_rawset(L, -3)
        set("__close", close)
        set("__tostring") { ctx in
            var closed: Int32 = 0
            let box = T.luaTypeName.withCString { kh_to_object(ctx.L, 1, $0, &closed) }
            if let box, let object = Unmanaged<AnyObject>.fromOpaque(box).takeUnretainedValue() as? T {
                ctx.push(object.luaDescription)
            } else {
                ctx.push("\(T.luaTypeName) (closed)")
            }
            return 1
        }
    }

    /// Gives the table on top of the stack the shared metatable of structured errors.
    static func setErrorMetatable(on L: OpaquePointer) {
        if kh_push_metatable(L, "keyhost.error") != 0 {
            let stack = LuaStack(L: L)
            stack.pushText("__tostring")
            LuaDispatch.push({ ctx in
                guard lua_type(ctx.L, 1) == LUA_TTABLE else { ctx.push("keyhost error"); return 1 }
                ctx.stack.pushText("message")
                lua_rawget(ctx.L, 1)
                if lua_type(ctx.L, -1) != LUA_TSTRING { kh_pop(ctx.L, 1); ctx.push("keyhost error") }
                return 1
            }, on: L)
            lua_rawset(L, -3)
        }
        lua_setmetatable(L, -2)
    }
}
