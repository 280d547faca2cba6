import Testing
@testable import LuaRuntime

@Suite struct ValueConversionTests {
    @Test func integersAndFloatsStayDistinct() throws {
        let state = try makeTestState()
        let values = try state.execute("return 3, 3.0, math.maxinteger, -0.0, 2^63", chunkName: "=t")
        #expect(values == [.integer(3), .number(3.0), .integer(Int64.max), .number(-0.0), .number(9.223372036854775808e18)])
        let back = try state.execute("local a, b = ... return math.type(a), math.type(b)", chunkName: "=t", arguments: [.integer(3), .number(3)])
        #expect(back == ["integer", "float"])
    }

    @Test func stringsAreBytes() throws {
        let state = try makeTestState()
        let bytes: [UInt8] = [0, 0xff, 0x80, 0x41, 0]
        let out = try state.execute("local s = ... return #s, s:byte(2), s", chunkName: "=t", arguments: [.string(bytes)])
        #expect(out == [.integer(5), .integer(255), .string(bytes)])
    }

    @Test func tablesRoundTripThroughBindings() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local t = echo({1, 2, {x = "y"}, n = 1.5, [true] = false})
            return t[1], t[2], t[3].x, t.n, t[true], math.type(t[1])
            """, chunkName: "=t")
        #expect(out == [.integer(1), .integer(2), "y", .number(1.5), .boolean(false), "integer"])
    }

    @Test func cyclesAreAnErrorNotACrash() throws {
        let state = try makeTestState()
        #expect(throws: LuaError.self) {
            try state.execute("local t = {} t.self = t return echo(t)", chunkName: "=t")
        }
        let message = try state.execute("local t = {} t[1] = t local ok, e = pcall(echo, t) return e", chunkName: "=t")
        #expect(message.first?.stringValue?.contains("cycle") == true)
    }

    @Test func functionsAndUserdataAreReferences() throws {
        let state = try makeTestState()
        let out = try state.execute("return function(a) return a * 2 end", chunkName: "=t")
        guard case .reference(let fn)? = out.first else { Issue.record("expected a reference"); return }
        #expect(fn.typeName == "function")
        #expect(try state.call(fn, [.integer(21)]) == [.integer(42)])
    }

    @Test func globalsAreRawAndTyped() throws {
        let state = try makeTestState()
        try state.setGlobal("answer", .integer(42))
        #expect(state.global("answer") == .integer(42))
        #expect(try state.execute("return answer + 0.5", chunkName: "=t") == [.number(42.5)])
    }
}
