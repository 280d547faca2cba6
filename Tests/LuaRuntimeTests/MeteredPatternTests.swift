import Testing
@testable import LuaRuntime

/// The sandbox's metered string.find/match/gmatch/gsub against Lua's own (the full profile keeps
/// the stock library): same results and same error messages on generated patterns and subjects.
@Suite struct MeteredPatternTests {
    /// Lua code that runs every case through the four functions and renders the outcomes as text.
    static let harness = #"""
    local cases = ...
    local function render(...)
      local out = {}
      for i = 1, select("#", ...) do
        local v = select(i, ...)
        out[#out + 1] = type(v) == "string" and ("%q"):format(v) or tostring(v)
      end
      return table.concat(out, ",")
    end
    local function try(f, ...)
      local r = table.pack(pcall(f, ...))
      if not r[1] then return "error: " .. tostring(r[2]) end
      return render(table.unpack(r, 2, r.n))
    end
    local results = {}
    for i, case in ipairs(cases) do
      local s, p, init = case[1], case[2], case[3]
      local all = {}
      all[#all + 1] = try(string.find, s, p, init)
      all[#all + 1] = try(string.find, s, p, init, true)
      all[#all + 1] = try(string.match, s, p, init)
      all[#all + 1] = try(function()
        local got = {}
        for a, b in string.gmatch(s, p, init) do got[#got + 1] = render(a, b) end
        return table.concat(got, ";")
      end)
      all[#all + 1] = try(string.gsub, s, p, "<%0>")
      all[#all + 1] = try(string.gsub, s, p, "%1|", 2)
      all[#all + 1] = try(string.gsub, s, p, function(a, b) if a == "a" then return nil end return "[" .. tostring(a) .. tostring(b) .. "]" end)
      all[#all + 1] = try(string.gsub, s, p, { a = "A", b = false, ["()"] = 7 })
      all[#all + 1] = try(string.gsub, s, p, "%z")
      results[i] = table.concat(all, " | ")
    end
    return results
    """#

    static let pieces = [
        "a", "b", "x", ".", "%a", "%d", "%s", "%w", "%p", "%A", "%%", "%.", "%z", "[ab]", "[^a]", "[a-c]", "[%d)]",
        "[]]", "[^]a]", "%b()", "%bab", "%f[%w]", "%f[%W]", "(", ")", "()", "%1", "%2", "*", "+", "-", "?",
        "^", "$", "%", "[", "%b", "%f", "%f[", "[a-", "%g", "%x", "%u", "%l", "%c",
    ]
    static let subjectAlphabet: [Character] = ["a", "b", "(", ")", "1", " ", "x", "A", ".", "%", "]"]

    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 { // SplitMix64
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func cases(count: Int, seed: UInt64) -> LuaValue {
        var random = Generator(state: seed)
        var cases: [LuaValue] = []
        for _ in 0..<count {
            let pattern = (0..<random.below(7)).map { _ in pieces[random.below(pieces.count)] }.joined()
            let subject = String((0..<random.below(14)).map { _ in subjectAlphabet[random.below(subjectAlphabet.count)] })
            let start = Int64(random.below(20)) - 8
            cases.append(.table(LuaTable(array: [.text(subject), .text(pattern), .integer(start)])))
        }
        return .table(LuaTable(array: cases))
    }

    func outcomes(_ profile: LuaProfile, _ cases: LuaValue) throws -> [LuaValue] {
        let state = try LuaState(profile: profile)
        guard case .table(let results)? = try state.execute(Self.harness, chunkName: "=harness", arguments: [cases]).first else {
            Issue.record("the harness returned no table"); return []
        }
        return results.array
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func sameAsLuasOwnLibrary(seed: UInt64) throws {
        let cases = Self.cases(count: 1500, seed: seed)
        let stock = try outcomes(.full, cases)
        let metered = try outcomes(.sandbox(SandboxLimits(memoryBytes: 256 << 20, instructions: 0, seconds: 60)), cases)
        #expect(stock.count == 1500)
        #expect(metered.count == stock.count)
        guard case .table(let list) = cases else { return }
        var mismatches = 0
        for (i, (a, b)) in zip(stock, metered).enumerated() where a != b {
            mismatches += 1
            if mismatches <= 5 {
                Issue.record("case \(list.array[i]): stock \(a.stringValue ?? "?") / metered \(b.stringValue ?? "?")")
            }
        }
        #expect(mismatches == 0)
    }

    @Test func longSubjectsAndDeepPatterns() throws {
        var list: [LuaValue] = []
        let long = String(repeating: "ab(a)b ", count: 300)
        for pattern in ["(a+)(b+)", "%b()", "(.-)%)", "^(.*)$", ("(a?)").repeated(190), ("(a?)").repeated(40), "(.-)b$", "%f[%w]%w+"] {
            list.append(.table(LuaTable(array: [.text(long), .text(pattern), .integer(1)])))
        }
        let cases = LuaValue.table(LuaTable(array: list))
        let stock = try outcomes(.full, cases)
        let metered = try outcomes(.sandbox(SandboxLimits(memoryBytes: 256 << 20, instructions: 0, seconds: 60)), cases)
        #expect(stock == metered)
    }
}

extension String {
    fileprivate func repeated(_ n: Int) -> String { String(repeating: self, count: n) }
}
