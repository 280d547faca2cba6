import CKeyhostLua
import Testing
@testable import LuaRuntime

/// Hostile code against the sandbox profile: each violation is a distinct error and the state stays usable.
@Suite struct SandboxTests {
    static let limits = SandboxLimits(memoryBytes: 16 << 20, instructions: 2_000_000, seconds: 10)

    func sandbox(_ limits: SandboxLimits = SandboxTests.limits) throws -> LuaState {
        try makeTestState(profile: .sandbox(limits))
    }

    func failure(_ state: LuaState, _ code: String) -> LuaError? {
        do {
            try state.execute(code, chunkName: "=untrusted")
            return nil
        } catch {
            return error as? LuaError
        }
    }

    func expectUsable(_ state: LuaState) throws {
        #expect(try state.execute("return 1 + 1", chunkName: "=after") == [.integer(2)])
    }

    @Test(arguments: [
        "while true do end",
        "while true do pcall(function() while true do end end) end",
        "coroutine.wrap(function() while true do end end)()",
        "local co = coroutine.create(function() while true do end end) while true do coroutine.resume(co) end",
        "repeat local ok = xpcall(function() while true do end end, function() while true do end end) until false",
        "xpcall(error, function() while true do end end)",
    ])
    func instructionBudget(code: String) throws {
        let state = try sandbox()
        #expect(failure(state, code) == .instructionBudget(SandboxTests.limits.instructions))
        try expectUsable(state)
    }

    /// A closed deterministic state's arena is kept for the next one only wiped: no byte a program's
    /// objects held, nothing on its free lists. Other tests open and close such states at the same
    /// time, so any arena seen kept must be clear, and one must be seen.
    @Test func aKeptArenaHoldsNothingOfTheStateBefore() throws {
        var seen = 0
        for _ in 0..<50 where seen == 0 {
            do {
                let state = try LuaState(profile: .deterministicSandbox(SandboxLimits(memoryBytes: 8 << 20)))
                try state.execute("""
                    keep = {} for i = 1, 3000 do keep[i] = { i, tostring(i), function() return i end } end
                    for i = 1, 3000, 2 do keep[i] = nil end
                    return #keep
                    """, chunkName: "=objects")
            }
            let clear = kh_arena_kept_is_clear()
            #expect(clear != 0, "an arena was kept with a closed state's bytes in it")
            if clear == 1 { seen += 1 }
        }
        #expect(seen > 0, "no arena was kept after a small deterministic state closed")
    }

    @Test func wallClockLimit() throws {
        let state = try sandbox(SandboxLimits(memoryBytes: 16 << 20, instructions: 0, seconds: 0.2))
        #expect(failure(state, "while true do end") == .timeLimit(seconds: 0.2))
        try expectUsable(state)
    }

    @Test(arguments: [
        #"local s = ("x"):rep(2^30)"#,
        "local t = {} for i = 1, 1e9 do t[i] = {i} end",
        "local t = {} local i = 0 while true do i = i + 1 t['k' .. i] = i end",
        "local s = 'x' while true do s = s .. s end",
        "big_string(1e9)",
    ])
    func memoryCap(code: String) throws {
        let state = try sandbox()
        #expect(failure(state, code) == .memoryLimit(bytes: SandboxTests.limits.memoryBytes))
        try expectUsable(state)
        #expect(state.memoryInUse < SandboxTests.limits.memoryBytes)
    }

    @Test func hugeStringsAreRefusedByLuaItself() throws {
        let state = try sandbox()
        guard case .runtime(let message)? = failure(state, #"local s = string.rep("x", 2^40)"#) else {
            Issue.record("expected a runtime error"); return
        }
        #expect(message.hasPrefix("untrusted:1: resulting string too large"))
        try expectUsable(state)
    }

    @Test func memoryErrorsCaughtInsideStillLeaveTheHostUsable() throws {
        let state = try sandbox()
        let out = try state.execute("local ok, e = pcall(string.rep, 'x', 2^30) return ok, e", chunkName: "=u")
        #expect(out == [.boolean(false), "not enough memory"])
        try expectUsable(state)
    }

    /// Deep recursion ends in Lua's "stack overflow" when the cap leaves room for a full Lua
    /// stack (about 100 MB), and in the memory limit before that otherwise.
    @Test func unboundedRecursion() throws {
        let small = try sandbox()
        #expect(failure(small, "local function f() return 1 + f() end return f()") == .memoryLimit(bytes: SandboxTests.limits.memoryBytes))
        let state = try sandbox(SandboxLimits(memoryBytes: 512 << 20))
        let error = failure(state, "local function f() return 1 + f() end return f()")
        guard case .runtime(let message)? = error else {
            Issue.record("expected a runtime error, got \(String(describing: error))"); return
        }
        #expect(message.contains("stack overflow"))
        try expectUsable(state)
    }

    @Test(arguments: [
        ("return io.open", "sandbox: 'io' is not available in the sandbox"),
        ("return _G.os.execute", "sandbox: 'os' is not available in the sandbox"),
        ("return _ENV.debug", "sandbox: 'debug' is not available in the sandbox"),
        ("return require('os')", "sandbox: 'require' is not available in the sandbox"),
        ("return package.loaded", "sandbox: 'package' is not available in the sandbox"),
        ("return dofile('/etc/passwd')", "sandbox: 'dofile' is not available in the sandbox"),
        ("return loadfile('/etc/passwd')", "sandbox: 'loadfile' is not available in the sandbox"),
        ("return load('\\27Lua\\84\\0')", "sandbox: binary chunks are not allowed"),
        ("return load('return 1', 'x', 'b')", "sandbox: binary chunks are not allowed (load mode must be \"t\")"),
        ("return string.dump(print)", "attempt to call a nil value (field 'dump')"),
        ("string.rep = nil", "sandbox: 'string' is read-only (cannot set 'rep')"),
        ("getmetatable('').__index = {}", "attempt to index a boolean value"),
        ("setmetatable(_G, nil)", "cannot change a protected metatable"),
        ("setmetatable({}, {__gc = function() while true do end end})", "sandbox: __gc metamethods are not allowed"),
        ("collectgarbage('stop')", "sandbox: collectgarbage(\"stop\") is not allowed"),
    ])
    func forbiddenThings(code: String, expected: String) throws {
        let state = try sandbox()
        guard case .runtime(let message)? = failure(state, code) else { Issue.record("no error for \(code)"); return }
        #expect(message.contains(expected), "\(code) → \(message)")
        try expectUsable(state)
    }

    @Test func noEscapeThroughRawAccessOrLoad() throws {
        let state = try sandbox()
        let out = try state.execute("""
            return rawget(_G, 'io'), rawget(_ENV, 'os'), load('return io')  ~= nil,
                   pcall(load('return os')), getmetatable('')
            """, chunkName: "=u")
        #expect(out[0] == .nil)
        #expect(out[1] == .nil)
        #expect(out[2] == .boolean(true))
        #expect(out[3] == .boolean(false)) // the loaded chunk shares the sandbox environment
        #expect(out.count == 5 && out[4] == .boolean(false))
    }

    @Test func xpcallStillCallsItsHandler() throws {
        let state = try sandbox()
        let out = try state.execute("return xpcall(function(a) error({a}) end, function(e) return e[1] * 2 end, 21)", chunkName: "=u")
        #expect(out == [.boolean(false), .integer(42)])
        #expect(try state.execute("return xpcall(function(a, b) return a + b end, print, 1, 2)", chunkName: "=u") == [.boolean(true), .integer(3)])
    }

    @Test func eachChunkGetsFreshGlobals() throws {
        let state = try sandbox()
        try state.execute("leaked = 42 string_copy = string", chunkName: "=one")
        #expect(try state.execute("return leaked", chunkName: "=two") == [.nil])
        #expect(try state.execute("return ('abc'):upper(), string.format('%d', 7), math.max(1, 2)", chunkName: "=u") == ["ABC", "7", .integer(2)])
    }

    @Test func hostExportsAreVisible() throws {
        let state = try sandbox()
        #expect(try state.execute("return need_string('host')", chunkName: "=u") == ["host"])
    }
}
