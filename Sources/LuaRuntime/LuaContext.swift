import CKeyhostLua
import CLua

/// The arguments and results of one call from Lua into Swift. Valid only during that call.
public struct LuaContext {
    let L: OpaquePointer
    let stack: LuaStack

    init(L: OpaquePointer) {
        self.L = L
        self.stack = LuaStack(L: L)
    }

    /// Number of arguments passed.
    public var argumentCount: Int32 { lua_gettop(L) }

    // MARK: arguments

    /// True when argument `i` is absent or nil.
    public func isNil(_ i: Int32) -> Bool { kh_isnoneornil(L, i) != 0 }

    /// Lua's type name of argument `i` (`__name` for userdata), for messages.
    public func typeName(_ i: Int32) -> String { isNil(i) && i > argumentCount ? "no value" : stack.argumentTypeName(at: i) }

    private func typeError(_ i: Int32, _ expected: String) -> LuaArgumentError {
        LuaArgumentError(i, "\(expected) expected, got \(typeName(i))")
    }

    /// Argument `i` as bytes (a string, or a number converted as Lua does).
    public func bytes(_ i: Int32) throws -> [UInt8] {
        guard let value = stack.bytes(at: i) else { throw typeError(i, "string") }
        return value
    }

    /// Argument `i` as bytes, or nil when absent.
    public func optionalBytes(_ i: Int32) throws -> [UInt8]? { isNil(i) ? nil : try bytes(i) }

    /// Argument `i` as text; invalid UTF-8 is an argument error.
    public func string(_ i: Int32) throws -> String {
        let raw = try bytes(i)
        guard let text = String(validating: raw, as: UTF8.self) else { throw LuaArgumentError(i, "string is not valid UTF-8") }
        return text
    }

    /// Argument `i` as text, or nil when absent.
    public func optionalString(_ i: Int32) throws -> String? { isNil(i) ? nil : try string(i) }

    /// Argument `i` as an integer (floats with an exact integer value are accepted, as in Lua).
    public func integer(_ i: Int32) throws -> Int64 {
        var isNumber: Int32 = 0
        let value = lua_tointegerx(L, i, &isNumber)
        if isNumber != 0 { return value }
        if lua_type(L, i) == LUA_TNUMBER { throw LuaArgumentError(i, "number has no integer representation") }
        throw typeError(i, "number")
    }

    /// Argument `i` as an integer, or `default` when absent.
    public func integer(_ i: Int32, default value: Int64) throws -> Int64 { isNil(i) ? value : try integer(i) }

    /// Argument `i` as a float.
    public func number(_ i: Int32) throws -> Double {
        var isNumber: Int32 = 0
        let value = lua_tonumberx(L, i, &isNumber)
        guard isNumber != 0 else { throw typeError(i, "number") }
        return value
    }

    /// Argument `i` as a boolean; only `nil` and `false` are false, as in Lua.
    public func boolean(_ i: Int32) -> Bool { lua_toboolean(L, i) != 0 }

    /// Argument `i` converted to a Swift value (tables copied deeply).
    public func value(_ i: Int32) throws -> LuaValue {
        do { return try stack.value(at: i) } catch let error as LuaError { throw LuaArgumentError(i, error.description) }
    }

    /// Argument `i` as a table (an options table, say), or an empty one when absent.
    public func table(_ i: Int32, optional: Bool = false) throws -> LuaTable {
        if optional && isNil(i) { return LuaTable() }
        guard lua_type(L, i) == LUA_TTABLE else { throw typeError(i, "table") }
        do { return try stack.table(at: i) } catch let error as LuaError { throw LuaArgumentError(i, error.description) }
    }

    /// Argument `i` as a function kept by reference.
    public func function(_ i: Int32) throws -> LuaReference {
        guard lua_type(L, i) == LUA_TFUNCTION else { throw typeError(i, "function") }
        return stack.reference(at: i)
    }

    /// Argument `i` as a Swift object of type `T` pushed with `push(object:)`.
    public func object<T: LuaObject>(_ i: Int32, as type: T.Type = T.self) throws -> T {
        var closed: Int32 = 0
        let box = T.luaTypeName.withCString { kh_to_object(L, i, $0, &closed) }
        if closed != 0 { throw LuaArgumentError(i, "\(T.luaTypeName) is closed") }
        guard let box, let object = Unmanaged<AnyObject>.fromOpaque(box).takeUnretainedValue() as? T else {
            throw typeError(i, T.luaTypeName)
        }
        return object
    }

    /// A Swift object of type `T` held by reference (a userdata found in an options table, say);
    /// `what` names it in the error when it is something else or closed.
    public func object<T: LuaObject>(_ reference: LuaReference, as type: T.Type = T.self, what: String) throws -> T {
        try stack.ensure(2)
        try stack.push(.reference(reference))
        defer { kh_pop(L, 1) }
        var closed: Int32 = 0
        let box = T.luaTypeName.withCString { kh_to_object(L, -1, $0, &closed) }
        if closed != 0 { throw LuaError.runtime("\(what): \(T.luaTypeName) is closed") }
        guard let box, let object = Unmanaged<AnyObject>.fromOpaque(box).takeUnretainedValue() as? T else {
            throw LuaError.runtime("\(what) must be a \(T.luaTypeName), got \(reference.typeName)")
        }
        return object
    }

    /// Checks that allocating `bytes` more stays within the state's memory cap; bindings that
    /// build large values call it first, since the cap is not enforced while Swift runs.
    public func reserve(bytes: Int) throws {
        let host = kh_gethost(L).pointee
        guard host.limit != 0 else { return }
        if bytes > host.limit || host.used > host.limit - bytes {
            kh_gethost(L).pointee.cap_hit = 1
            throw LuaError.memoryLimit(bytes: host.limit)
        }
    }

    // MARK: results

    /// Pushes results and returns their count, for `return try ctx.return(...)`.
    public func `return`(_ values: LuaValue...) throws -> Int32 {
        try stack.ensure(Int32(clamping: values.count))
        for value in values { try push(value) }
        return Int32(values.count)
    }

    /// Pushes a list of results and returns their count.
    public func `return`(list values: [LuaValue]) throws -> Int32 {
        try stack.ensure(Int32(clamping: values.count))
        for value in values { try push(value) }
        return Int32(values.count)
    }

    public func push(_ value: LuaValue) throws { try stack.push(value) }
    public func push(_ integer: Int64) { lua_pushinteger(L, integer) }
    public func push(_ number: Double) { lua_pushnumber(L, number) }
    public func push(_ bool: Bool) { lua_pushboolean(L, bool ? 1 : 0) }
    public func push(_ text: String) { stack.pushText(text) }
    public func push(bytes: [UInt8]) { stack.pushBytes(bytes) }
    public func pushNil() { lua_pushnil(L) }

    /// Pushes a Swift object as userdata with its type's methods and metamethods.
    public func push<T: LuaObject>(object: T) {
        LuaObjectSupport.push(object, on: L)
    }

    /// Pushes a new sequence table of Swift objects (a binding's list of userdata, e.g. a multipath descriptor's parts).
    /// Only non-raising calls: a fresh table has no metatable, and the allocator does not fail while Swift runs.
    public func push<T: LuaObject>(objects: [T]) throws {
        try stack.ensure(3)
        lua_createtable(L, Int32(clamping: objects.count), 0)
        for (i, object) in objects.enumerated() {
            LuaObjectSupport.push(object, on: L)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
    }

    /// Pushes a Swift function.
    public func push(function body: @escaping LuaFunctionBody) {
        LuaDispatch.push(body, on: L)
    }

    // MARK: calling back into Lua

    /// Calls a Lua function from inside a binding; a Lua error comes back as `LuaRaisedError`,
    /// which rethrown from the binding re-raises the same error object.
    public func call(_ function: LuaReference, _ arguments: [LuaValue]) throws -> [LuaValue] {
        let base = lua_gettop(L)
        try stack.ensure(Int32(clamping: arguments.count + 4))
        try stack.push(.reference(function))
        for argument in arguments { try stack.push(argument) }
        let status = kh_pcall(L, Int32(arguments.count), LUA_MULTRET, 0)
        defer { lua_settop(L, base) }
        if status != LUA_OK {
            let message = stack.describe(at: -1)
            throw LuaRaisedError(value: stack.reference(at: -1), message: message)
        }
        return try stack.values(above: base)
    }

    // MARK: errors

    /// `chunk:line:` of the Lua code that called the binding.
    public var callerPosition: String {
        luaL_where(L, 1)
        defer { kh_pop(L, 1) }
        return stack.bytes(at: -1).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Leaves the error value for `error` on the stack and says how the trampoline must raise it.
    func report(_ error: Error, argumentIndex: UnsafeMutablePointer<Int32>?) -> Int32 {
        guard lua_checkstack(L, 4) != 0 else { return KH_RAISE_VALUE } // raises whatever is on top
        switch error {
        case is LuaInterruption:
            return KH_RAISE_INTERRUPT
        case let error as LuaArgumentError:
            stack.pushText(error.message)
            argumentIndex?.pointee = error.position
            return KH_ARGERROR
        case let error as LuaRaisedError:
            if let value = error.value, (try? stack.push(.reference(value))) != nil { return KH_RAISE_VALUE }
            stack.pushText(error.message)
            return KH_RAISE_VALUE
        case let error as LuaErrorConvertible:
            var fields = error.luaErrorFields
            fields["message"] = .text(callerPosition + String(describing: error))
            if (try? stack.push(.table(fields))) == nil { stack.pushText(String(describing: error)); return KH_RAISE_MESSAGE }
            LuaObjectSupport.setErrorMetatable(on: L)
            return KH_RAISE_VALUE
        default:
            stack.pushText(String(describing: error))
            return KH_RAISE_MESSAGE
        }
    }
}
