import Testing
@testable import LuaRuntime

/// Every way an error can cross between Swift and Lua; run under AddressSanitizer in CI.
@Suite struct BindingErrorTests {
    func runtimeMessage(_ state: LuaState, _ code: String) -> String? {
        do {
            try state.execute(code, chunkName: "=t")
            return nil
        } catch let error as LuaError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    @Test func argumentErrorsUseLuaWording() throws {
        let state = try makeTestState()
        let message = runtimeMessage(state, "need_string(nil)")
        #expect(message?.hasPrefix("t:1: bad argument #1 to 'need_string' (string expected, got nil)") == true)
        let method = runtimeMessage(state, "local c = counter(1) c:add('x')")
        #expect(method?.hasPrefix("t:1: bad argument #1 to 'add' (number expected, got string)") == true)
        let selfError = runtimeMessage(state, "local c = counter(1) c.add(5, 1)")
        #expect(selfError?.contains("test.counter expected, got number") == true)
        let noValue = runtimeMessage(state, "local c = counter(1) c:add()")
        #expect(noValue?.contains("(number expected, got no value)") == true)
    }

    @Test func swiftErrorsCarryTheCallersPosition() throws {
        let state = try makeTestState()
        let message = runtimeMessage(state, "\n\nswift_error()")
        #expect(message?.hasPrefix("t:3: swift says no\nstack traceback:") == true)
        let caught = try state.execute("local ok, e = pcall(function() swift_error() end) return ok, e", chunkName: "=t")
        #expect(caught == [.boolean(false), "t:1: swift says no"])
    }

    @Test func structuredErrorsHaveFieldsAndReadableText() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local ok, e = pcall(function() card_error() end)
            return type(e), e.sw, e.retries_left, tostring(e)
            """, chunkName: "=t")
        #expect(out == ["table", .integer(0x63C2), .integer(2), "t:1: wrong PIN (2 tries left)"])
        #expect(runtimeMessage(state, "card_error()") == "t:1: wrong PIN (2 tries left)")
    }

    @Test func errorObjectsPassThroughBindingsUnchanged() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local obj = { code = 7 }
            local ok, e = pcall(call, function() error(obj) end)
            return ok, rawequal(e, obj), e.code
            """, chunkName: "=t")
        #expect(out == [.boolean(false), .boolean(true), .integer(7)])
        let message = runtimeMessage(state, "call(function() error({}) end)")
        #expect(message?.hasPrefix("(error object is a table value)") == true)
        let custom = runtimeMessage(state, "error(setmetatable({}, {__tostring = function() return 'custom' end}))")
        #expect(custom == "custom")
    }

    @Test func metamethodErrorsReachedFromSwiftAreContained() throws {
        let state = try makeTestState()
        let described = try state.execute("""
            return describe(setmetatable({}, {__tostring = function() error('tostring fails') end}))
            """, chunkName: "=t")
        #expect(described.first?.stringValue?.contains("error in __tostring") == true)
        let index = runtimeMessage(state, "call(function() return setmetatable({}, {__index = function() error('index fails') end}).x end)")
        #expect(index?.hasPrefix("t:1: index fails") == true)
        let gc = try state.execute("""
            setmetatable({}, {__gc = function() error('gc fails') end})
            collectgarbage() collectgarbage()
            return need_string('still alive')
            """, chunkName: "=t")
        #expect(gc == ["still alive"])
    }

    @Test func coroutinesAcrossBindings() throws {
        let state = try makeTestState()
        // An error inside a coroutine, raised by a binding, resumed from Lua.
        let inside = try state.execute("""
            local co = coroutine.create(function() swift_error() end)
            return coroutine.resume(co)
            """, chunkName: "=t")
        #expect(inside == [.boolean(false), "t:1: swift says no"])
        // A binding calls Lua that yields: Lua refuses cleanly.
        let yield = try state.execute("""
            local co = coroutine.create(function() return call(function() coroutine.yield(1) end) end)
            return coroutine.resume(co)
            """, chunkName: "=t")
        #expect(yield.first == .boolean(false))
        #expect(yield.last?.stringValue?.contains("attempt to yield across a C-call boundary") == true)
        // A binding resumes a coroutine (through coroutine.wrap) that errors.
        let wrapped = try state.execute("""
            local ok, e = pcall(call, coroutine.wrap(function() error('in co', 0) end))
            return ok, e
            """, chunkName: "=t")
        #expect(wrapped == [.boolean(false), "in co"])
        // Bindings inside coroutines keep working after all that.
        let after = try state.execute("""
            local co = coroutine.wrap(function(a) local b = coroutine.yield(need_string(a)) return need_string(b) end)
            return co('x'), co('y')
            """, chunkName: "=t")
        #expect(after == ["x", "y"])
    }

    @Test func syntaxErrorsAreReportedAsSuch() throws {
        let state = try makeTestState()
        do {
            try state.execute("local x = <", chunkName: "=t")
            Issue.record("no error")
        } catch let error as LuaError {
            #expect(error == .syntax("t:1: unexpected symbol near '<'"))
        }
    }
}
