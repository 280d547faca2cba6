import KeyhostTestSupport

/// Token programs made from a seed: each mixes what has let a run's effects depend on where things
/// lie in memory — `load` of long texts (a chunk named by its text), tables with holes and `#`,
/// `next` and `pairs`, `collectgarbage`, weak tables (`__mode`), string building, and host
/// functions whose errors are caught. The same seed always gives the same programs.
struct HostileProgramGenerator {
    /// A fixed sequence for a fixed seed on every platform.
    private var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    private mutating func below(_ n: Int) -> Int { random.below(n) }

    /// What every program starts with: its own pseudo-random walk, long texts to load, the holes
    /// shape of DeterminismTests, and `out`, whose entries are emitted joined at the end.
    private mutating func preamble() -> String {
        let texts = 8 + below(40), padding = 4 + below(12)
        return """
            local t = ...
            local out, keep, texts = {}, {}, {}
            local x = \(below(1 << 30))
            local function rnd(m) x = (x * 1103515245 + 12345) % 2147483648 return (x >> 8) % m end
            \(DeterminismTests.holesShape)
            for i = 1, \(texts) do
              texts[i] = "return " .. i .. " -- " .. string.rep("a long chunk text ", \(padding)) .. i
            end
            """
    }

    /// One statement of a program: each a way the arena, the collector or the string cache is moved.
    private mutating func fragment() -> String {
        let n = 1 + below(60)
        switch below(12) {
        case 0: // loads named by their own long text, again and again
            return "for _ = 1, \(n) do local i = rnd(#texts) + 1 out[#out + 1] = load(texts[i])() end"
        case 1: // long names given, of every kind Lua shows differently
            let names = ["\"=\" .. texts[i]", "\"@\" .. texts[i]", "texts[i]", "texts[i] .. \"\\nsecond line\"", "\"=(short)\""]
            let name = names[below(names.count)]
            return "for _ = 1, \(n) do local i = rnd(#texts) + 1 local f = load(texts[i], \(name), \"t\") out[#out + 1] = f() end"
        case 2: // a chunk that fails to compile: its message names the chunk
            return "do local i = rnd(#texts) + 1 local _, m = load(texts[i] .. \" +\") out[#out + 1] = m end"
        case 3: // loads from a reader function, named or not
            return "do local i, done = rnd(#texts) + 1, false local f = load(function() if done then return nil end done = true return texts[i] end\(below(2) == 0 ? "" : ", texts[i]")) out[#out + 1] = f() end"
        case 4: // tables as keys coming and going: where they land is their address
            return "out[#out + 1] = holes(rnd(1000), {}, function() return {} end)"
        case 5: // strings as keys
            return "out[#out + 1] = holes(rnd(1000), {}, function(k, y) return \"k\" .. (y % \(n + 5)) end)"
        case 6: // closures as keys
            return "out[#out + 1] = holes(rnd(1000), {}, function(k) return function() return k end end)"
        case 7: // the collector asked to run
            return "collectgarbage() collectgarbage(\"step\") out[#out + 1] = collectgarbage(\"count\")"
        case 8: // weak tables, whose entries would go when the collector ran
            let mode = ["k", "v", "kv"][below(3)]
            return "do local w = setmetatable({}, { __mode = \"\(mode)\" }) for i = 1, \(n * 10) do w[i] = {} end collectgarbage() out[#out + 1] = #w end"
        case 9: // next and pairs over keys that came and went
            return """
                do local s = {} for i = 1, \(n * 4) do s["k" .. rnd(\(n + 9))] = i s[rnd(\(n + 9))] = nil end
                  out[#out + 1] = tostring((next(s))) for k, v in pairs(s) do out[#out + 1] = k .. "=" .. v end end
                """
        case 10: // string building, kept alive or dropped
            return "do local parts = {} for i = 1, \(n) do parts[i] = string.rep(string.char(65 + rnd(26)), rnd(60) + 1) end keep[#keep + 1] = table.concat(parts, rnd(2) == 0 and \"\" or \",\") out[#out + 1] = #keep[#keep] end"
        default: // host functions raising, and metatables (Lua's own luaS_new calls with literal names)
            return """
                for _ = 1, \(n) do
                  local m = setmetatable({}, {}) out[#out + 1] = tostring(m) .. tostring(getmetatable(m) ~= nil)
                  out[#out + 1] = select(2, pcall(t.hash.sha256, m)) out[#out + 1] = select(2, pcall(t.transfer, texts[1]))
                end
                """
        }
    }

    /// The next program: a preamble and 6 to 17 fragments, ending in one emitted record.
    mutating func program() -> String {
        var lines = [preamble()]
        for _ in 0..<(6 + below(12)) { lines.append(fragment()) }
        lines.append("t.emit(table.concat(out, \",\"))")
        return lines.joined(separator: "\n")
    }
}
