@testable import LuaRuntime

/// A Swift object exposed to Lua, counting its lives so tests can see __gc and __close.
final class Counter: LuaObject {
    static var alive = 0
    static var closed = 0
    var value: Int64
    init(_ value: Int64) { self.value = value; Counter.alive += 1 }
    deinit { Counter.alive -= 1 }

    static let luaTypeName = "test.counter"
    static let luaMethods: [String: LuaMethod<Counter>] = [
        "add": { counter, ctx in
            counter.value += try ctx.integer(2)
            ctx.push(counter.value)
            return 1
        },
        "fail": { _, _ in throw TestFailure(text: "counter refused") },
    ]
    var luaDescription: String { "counter(\(value))" }
    func luaClose() { Counter.closed += 1 }
}

/// Created only by LuaObjectTests (which run serialized), so its count is not disturbed by other suites.
final class Probe: LuaObject {
    static var alive = 0
    init() { Probe.alive += 1 }
    deinit { Probe.alive -= 1 }
    static let luaTypeName = "test.probe"
    static let luaMethods: [String: LuaMethod<Probe>] = [:]
    var luaDescription: String { "probe" }
}

struct TestFailure: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}

struct CardLikeError: LuaErrorConvertible, CustomStringConvertible {
    var description: String { "wrong PIN (2 tries left)" }
    var luaErrorFields: LuaTable { LuaTable(["sw": .integer(0x63C2), "retries_left": .integer(2)]) }
}

/// A full-profile state with a test module `t` of bindings that exercise every error path.
func makeTestState(profile: LuaProfile = .full) throws -> LuaState {
    let state = try LuaState(profile: profile)
    state.setGlobal("counter", function: { ctx in
        ctx.push(object: Counter(try ctx.integer(1, default: 0)))
        return 1
    })
    state.setGlobal("probe", function: { ctx in
        ctx.push(object: Probe())
        return 1
    })
    state.setGlobal("swift_error", function: { _ in throw TestFailure(text: "swift says no") })
    state.setGlobal("card_error", function: { _ in throw CardLikeError() })
    state.setGlobal("need_string", function: { ctx in
        ctx.push(bytes: try ctx.bytes(1))
        return 1
    })
    state.setGlobal("call", function: { ctx in
        let fn = try ctx.function(1)
        var args: [LuaValue] = []
        if ctx.argumentCount > 1 { for i in 2...ctx.argumentCount { args.append(try ctx.value(i)) } }
        return try ctx.return(list: try ctx.call(fn, args))
    })
    state.setGlobal("echo", function: { ctx in
        try ctx.return(list: (0..<ctx.argumentCount).map { try ctx.value($0 + 1) })
    })
    state.setGlobal("big_string", function: { ctx in
        let count = Int(try ctx.integer(1))
        try ctx.reserve(bytes: count)
        ctx.push(bytes: [UInt8](repeating: 0x61, count: count))
        return 1
    })
    state.setGlobal("describe", function: { ctx in
        ctx.push(ctx.stack.describe(at: 1))
        return 1
    })
    return state
}
