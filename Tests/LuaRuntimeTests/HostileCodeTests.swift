import Testing
@testable import LuaRuntime

/// Reproducers from the adversarial review of the sandbox and the bridge (issue 9, section B).
/// Each crashed, escaped or overran before its fix.
@Suite struct HostileCodeTests {
    func sandbox(_ limits: SandboxLimits) throws -> LuaState { try makeTestState(profile: .sandbox(limits)) }

    func failure(_ state: LuaState, _ code: String) -> LuaError? {
        do {
            try state.execute(code, chunkName: "=hostile")
            return nil
        } catch {
            return error as? LuaError
        }
    }

    // MARK: B2: results are bounded, and need not be converted at all

    @Test func sharedSubtablesCannotBlowUpTheConversion() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 1 << 20, instructions: 10_000_000, seconds: 5))
        guard case .runtime(let message)? = failure(state, "local t = {} for i = 1, 40 do t = {t, t} end return t") else {
            Issue.record("expected a conversion error"); return
        }
        #expect(message.contains("value too large to convert"))
        #expect(try state.execute("return 1", chunkName: "=after") == [.integer(1)])
    }

    @Test func manyCopiesOfOneStringAreBoundedToo() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 4 << 20, instructions: 10_000_000, seconds: 5))
        guard case .runtime(let message)? = failure(state, "local s = ('x'):rep(1 << 20) local t = {} for i = 1, 100 do t[i] = s end return t") else {
            Issue.record("expected a conversion error"); return
        }
        #expect(message.contains("value too large to convert"))
    }

    @Test func runDropsResultsWithoutConvertingThem() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 1 << 20, instructions: 10_000_000, seconds: 5))
        try state.run(bytes: Array("local t = {} for i = 1, 40 do t = {t, t} end return t".utf8), chunkName: "=r")
        try state.run(bytes: Array("local t = {} t.self = t return t".utf8), chunkName: "=r")
    }

    // MARK: B3: finalizers and methods check that the userdata is theirs

    @Test func finalizersAndCloseRefuseForeignUserdata() throws {
        let state = try makeTestState()
        let error = failure(state, """
            local c = counter(3)
            local mt = debug.getmetatable(c)
            local f = io.tmpfile()
            mt.__gc(f)            -- a FILE* handle, not a Swift object
            mt.__close(f)
            mt.__gc(setmetatable({}, {}))
            mt.__tostring(f)
            mt.__index.add(f, 1)  -- a type error, never a cast of the handle
            """)
        guard case .runtime(let message)? = error else { Issue.record("expected a type error, got \(String(describing: error))"); return }
        #expect(message.contains("bad argument #1 to 'add' (test.counter expected, got FILE*)"))
    }

    @Test func finalizerCalledByHandOnItsOwnObjectReleasesOnce() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local c = counter(3)
            local tmp = io.tmpfile()
            local mt = debug.getmetatable(c)
            mt.__gc(tmp) mt.__close(tmp)
            local fn_holder = select(2, debug.getupvalue(need_string, 1))
            if fn_holder then debug.getmetatable(fn_holder).__gc(tmp) end
            tmp:write("still a file") tmp:seek("set") local text = tmp:read("a")
            mt.__gc(c)
            local ok, e = pcall(c.add, c, 1)
            return text, ok, tostring(e):match("closed") ~= nil
            """, chunkName: "=t")
        #expect(out.prefix(3) == ["still a file", false, true])
    }

    @Test func metatablesAreHidden() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local ok, e = pcall(card_error)
            return getmetatable(counter(1)), getmetatable(e), getmetatable(need_string), tostring(counter(2))
            """, chunkName: "=t")
        #expect(out == [false, false, .nil, "counter(2)"])
    }

    // MARK: B4: the read-only library proxies never hand out the real tables

    @Test func libraryProxiesDoNotLeakTheRealTables() throws {
        let state = try sandbox(SandboxLimits())
        _ = try state.execute("""
            for _, lib in ipairs({string, math, table, utf8, coroutine}) do
              local real = select(2, pairs(lib))
              pcall(function() real.format = nil; real.max = nil; real.concat = nil end)
              pcall(rawset, real, "len", nil)
              for k in pairs(lib) do pcall(rawset, real, k, false) end
            end
            """, chunkName: "=one")
        let out = try state.execute("return string.format('%d', 5), math.max(1, 2), table.concat({'a', 'b'}), ('ab'):len()", chunkName: "=two")
        #expect(out == ["5", .integer(2), "ab", .integer(2)])
        let names = try state.execute("local n = 0 for k, v in pairs(string) do n = n + 1 end return n", chunkName: "=three")
        #expect(names.first.map { if case .integer(let n) = $0 { return n > 10 } else { return false } } == true)
    }

    // MARK: B5: long calls into C are charged to the limits

    @Test func pathologicalPatternHitsTheBudget() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 16 << 20, instructions: 2_000_000, seconds: 60))
        let pattern = String(repeating: "a*", count: 20) + "b"
        #expect(failure(state, "return string.find(('a'):rep(100), '\(pattern)')") == .instructionBudget(2_000_000))
        #expect(failure(state, "return pcall(string.match, ('a'):rep(100), '\(pattern)')") == .instructionBudget(2_000_000))
        #expect(failure(state, "for x in ('a'):rep(60):gmatch('\(pattern)') do end") == .instructionBudget(2_000_000))
        #expect(failure(state, "return ('a'):rep(60):gsub('\(pattern)', 'x')") == .instructionBudget(2_000_000))
        #expect(try state.execute("return ('hello world'):find('o w')", chunkName: "=ok") == [.integer(5), .integer(7)])
    }

    @Test func pathologicalPatternHitsTheTimeLimitWithoutABudget() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 16 << 20, instructions: 0, seconds: 0.2))
        let pattern = String(repeating: "a*", count: 20) + "b"
        #expect(failure(state, "return string.find(('a'):rep(100), '\(pattern)')") == .timeLimit(seconds: 0.2))
    }

    @Test(arguments: [
        "table.move({}, 1, 1e12, 1)",
        "local t = {} for i = 1, 200000 do t[i] = -i end table.sort(t)",
        "table.concat({}, '', 1, 1e12)",
        "table.unpack({}, 1, 1e12)",
        "local t = {} for i = 1, 100000 do t[i] = i end for i = 1, 1000 do table.insert(t, 1, i) end",
        "string.rep('xy', 4e6)",
        "load(('x = 1 '):rep(400000))",
    ])
    func longCallsIntoCAreCharged(code: String) throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 64 << 20, instructions: 1_000_000, seconds: 60))
        #expect(failure(state, code) == .instructionBudget(1_000_000), "\(code)")
    }

    @Test func repOfNothingReturnsAtOnce() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 16 << 20, instructions: 1_000_000, seconds: 60))
        #expect(try state.execute("return #string.rep('', 1e15), #(''):rep(1e15, '')", chunkName: "=r") == [.integer(0), .integer(0)])
        #expect(try state.execute("local t = {3, 1, 2} table.sort(t) return table.concat(t, ',')", chunkName: "=r") == ["1,2,3"])
    }

    @Test func chargedFunctionsKeepLuasErrorMessages() throws {
        let state = try sandbox(SandboxLimits())
        guard case .runtime(let message)? = failure(state, "table.insert({}, 5, 1)") else { Issue.record("no error"); return }
        #expect(message.contains("bad argument #2 to 'insert' (position out of bounds)"))
        guard case .runtime(let sortMessage)? = failure(state, "table.sort(nil)") else { Issue.record("no error"); return }
        #expect(sortMessage.contains("bad argument #1 to 'sort' (table expected, got nil)"))
    }

    /// With no instruction budget a single C call cannot be stopped, but its overrun is reported.
    @Test func anOverrunInsideOneCallIsReported() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 256 << 20, instructions: 0, seconds: 0.05))
        let code = "local t = {} for i = 1, 1000000 do t[i] = (i * 7919) % 1000003 end table.sort(t) return #t"
        #expect(failure(state, code) == .timeLimit(seconds: 0.05))
    }

    // MARK: B1: Lua 5.4.4's unbounded nesting of coroutine.close (fixed upstream in 5.4.5)

    @Test func deeplyNestedCoroutineClosesStopBeforeTheCStackEnds() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 256 << 20, instructions: 0, seconds: 60))
        let error = failure(state, """
            local coro = false
            for i = 1, 12000 do
              local previous = coro
              coro = coroutine.create(function()
                local cc <close> = setmetatable({}, {__close = function()
                  if previous then local ok, e = coroutine.close(previous) if not ok then error(e, 0) end end
                end})
                coroutine.yield()
              end)
              assert(coroutine.resume(coro))
            end
            local ok, e = coroutine.close(coro)
            error(e, 0)
            """)
        guard case .runtime(let message)? = error else { Issue.record("expected an error, got \(String(describing: error))"); return }
        #expect(message.hasPrefix("hostile:6: C stack overflow (coroutines closed inside one another too deeply)"))
        #expect(try state.execute("return coroutine.close(coroutine.create(print))", chunkName: "=after") == [true])
    }

    @Test func wrappedCoroutinesBehaveAsLuasOwn() throws {
        let state = try sandbox(SandboxLimits())
        let out = try state.execute("""
            local gen = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
            local first, second = gen(1), gen(10)
            local ok, e = pcall(coroutine.wrap(function() error("x") end))
            return first, second, ok, e, pcall(gen)
            """, chunkName: "=w")
        #expect(out == [.integer(2), .integer(20), false, "w:3: x", false, "cannot resume dead coroutine"])
    }

    // MARK: B6: registry metamethods never run under Swift

    @Test func poisonedRegistryDoesNotReachSwift() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            setmetatable(debug.getregistry(), {
              __index = function() error("registry trap") end,
              __newindex = function() error("registry trap") end,
            })
            local c = counter(1)                  -- first object of its type: creates the metatable
            local ok, e = pcall(card_error)       -- first structured error: creates its metatable
            return c:add(2), ok, tostring(e), tostring(c)
            """, chunkName: "=t")
        #expect(out == [.integer(3), false, "wrong PIN (2 tries left)", "counter(3)"])
    }

    // MARK: B7: compiling counts against the memory cap

    @Test func loadingSourceIsChargedToTheMemoryCap() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 1 << 20, instructions: 10_000_000, seconds: 5))
        let source = "local t = {" + String(repeating: "1,", count: 1_000_000) + "}"
        do {
            try state.execute(source, chunkName: "=big")
            Issue.record("a 2 MB table constructor compiled under a 1 MiB cap")
        } catch let error as LuaError {
            #expect(error == .memoryLimit(bytes: 1 << 20))
        }
        #expect(state.memoryInUse < 1 << 20)
        #expect(try state.execute("return 2", chunkName: "=after") == [.integer(2)])
    }
}
