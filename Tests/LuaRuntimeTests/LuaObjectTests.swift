import Testing
@testable import LuaRuntime

@Suite(.serialized) struct LuaObjectTests {
    @Test func methodsAndToString() throws {
        let state = try makeTestState()
        let out = try state.execute("""
            local c = counter(5)
            return c:add(2), tostring(c):match('^counter%(7%)$') ~= nil
            """, chunkName: "=t")
        #expect(out == [.integer(7), .boolean(true)])
    }

    @Test func closeRunsOnceAndLaterUseIsAnError() throws {
        let state = try makeTestState()
        let closedBefore = Counter.closed
        let out = try state.execute("""
            local keep
            do
              local c <close> = counter(1)
              keep = c
            end
            local ok, e = pcall(keep.add, keep, 1)
            keep:close() -- closing again does nothing
            return ok, e, tostring(keep)
            """, chunkName: "=t")
        #expect(Counter.closed == closedBefore + 1)
        #expect(out.first == .boolean(false))
        #expect(out[1].stringValue?.contains("test.counter is closed") == true)
        #expect(out[2] == "test.counter (closed)")
    }

    @Test func garbageCollectionReleasesSwiftObjects() throws {
        let state = try makeTestState()
        let before = Probe.alive
        try state.execute("for i = 1, 100 do probe() end", chunkName: "=t")
        try state.execute("collectgarbage() collectgarbage()", chunkName: "=t")
        #expect(Probe.alive == before)
        try state.execute("held = probe()", chunkName: "=t")
        #expect(Probe.alive == before + 1)
        try state.execute("held = nil collectgarbage() collectgarbage()", chunkName: "=t")
        #expect(Probe.alive == before)
    }

    @Test func closingTheStateReleasesEverything() throws {
        let before = Probe.alive
        do {
            let state = try makeTestState()
            try state.execute("held = {probe(), probe()}", chunkName: "=t")
            #expect(Probe.alive == before + 2)
        }
        #expect(Probe.alive == before)
    }

    @Test func errorsThrownByMethods() throws {
        let state = try makeTestState()
        let out = try state.execute("local ok, e = pcall(function() counter(1):fail() end) return e", chunkName: "=t")
        #expect(out == ["t:1: counter refused"])
    }
}
