import KeyhostTokens
import KeyhostWorkerProcess
import Testing

/// Lua's string cache is keyed by the address of the C text it is given (lstring.c, luaS_new): for
/// a text longer than 40 bytes, a hit saves an allocation and a miss makes one, so a run that
/// reached it with a long text allocated differently in each process, the collector ran at other
/// times, later tables got other arena blocks, and `#` of a table with holes differed (issue 31,
/// B: a payment's payee refused the receipt of the payer's run). Each program here runs in an
/// exec'd worker, a fork server's child and a warm worker, and must give the same outcome in each.
@Suite(.serialized) struct StringCacheDeterminismTests {
    static let limits = DeterminismTests.limits

    /// The issue's case: chunks loaded from texts longer than 40 bytes (each named by its text),
    /// between calls that put Lua's own literal names in the cache, and `#` of tables with holes.
    static let loadOfLongTexts = """
        local t = ...
        \(DeterminismTests.holesShape)
        local lengths, sum = {}, 0
        -- Each phase's texts lie elsewhere in the heap: another chance for a cache slot shared by
        -- two texts to be shared with one of Lua's literal names too, which makes both miss.
        for phase = 1, 6 do
          local texts = {}
          for i = 1, 40 do texts[i] = "return " .. i .. " -- phase " .. phase .. ": a chunk longer than forty bytes, named by itself" end
          for round = 1, 12 do
            for i = 1, 40 do
              sum = sum + load(texts[(i * round) % 40 + 1])()
              -- each asks Lua for a metamethod by a C literal name, which goes through the cache
              local m = setmetatable({}, {})
              for _ in pairs(m) do end
              sum = sum + #tostring(m) + #select(2, pcall(string.rep, m)) + (getmetatable(m) and 1 or 0)
            end
            lengths[#lengths + 1] = holes(phase * 100 + round, {}, function() return {} end)
          end
        end
        t.emit(table.concat(lengths, ",") .. ";" .. sum)
        """

    @Test func loadOfLongTextsGivesTheSameEffectsInEveryKindOfWorker() throws {
        let kinds = WorkerKinds()
        defer { kinds.stop() }
        let request = try WorkerRunnerTests.request(Self.loadOfLongTexts, limits: Self.limits)
        let agreed = try kinds.agree(request, "load of long texts")
        #expect(agreed.map { String(decoding: $0, as: UTF8.self).hasPrefix("completed") } == true, "\(agreed.map { String(decoding: $0, as: UTF8.self) } ?? "")")
        // Fresh exec'd workers again: each maps the heap and the library at other random addresses.
        let fresh = (0..<3).map { _ in WorkerKinds.bytes(WorkerRunner(executable: Keyhost.binary.path).run(request)) }
        #expect(Set(fresh).count == 1 && fresh.first == agreed)
    }

    /// Text the host hands a program is pushed by its length, never through the cache: a long key
    /// of `t.args` (the holder chooses it) and a host function's long error message, caught.
    @Test func longArgumentKeysAndCaughtHostErrorsGiveTheSameEffects() throws {
        let kinds = WorkerKinds()
        defer { kinds.stop() }
        let keys = (0..<24).map { "an argument key the holder chose, longer than forty bytes, number \($0)" }
        var request = try WorkerRunnerTests.request("""
            local t = ...
            \(DeterminismTests.holesShape)
            local lengths, seen = {}, 0
            for round = 1, 40 do
              for i = 0, 23 do
                local key = "an argument key the holder chose, longer than forty bytes, number " .. i
                seen = seen + t.args[key]
                local ok, message = pcall(t.transfer, key)
                local ok2, message2 = pcall(t.hash.sha256, {})
                seen = seen + #message + #message2
              end
              lengths[#lengths + 1] = holes(round, {}, function() return {} end)
            end
            local keys = {}
            for k in pairs(t.args) do keys[#keys + 1] = k end
            t.emit { table.concat(lengths, ","), seen, #keys, keys[1] }
            """, limits: Self.limits)
        request.arguments = .map(keys.enumerated().map { CBORPair(.text($1), .unsigned(UInt64($0))) })
        let agreed = try kinds.agree(request, "long argument keys and host errors")
        #expect(agreed.map { String(decoding: $0, as: UTF8.self).hasPrefix("completed") } == true, "\(agreed.map { String(decoding: $0, as: UTF8.self) } ?? "")")
    }

    /// Programs from a fixed seed that mix loads of long texts, tables with holes, `#`, `next`,
    /// `collectgarbage`, weak tables, string building and caught host errors.
    @Test func generatedProgramsGiveTheSameEffectsInEveryKindOfWorker() throws {
        let kinds = WorkerKinds()
        defer { kinds.stop() }
        var generator = HostileProgramGenerator(seed: 31)
        var completed = 0
        for index in 0..<60 {
            let program = generator.program()
            let request = try WorkerRunnerTests.request(program, limits: Self.limits)
            guard let agreed = try kinds.agree(request, "generated program \(index):\n\(program)") else { continue }
            if String(decoding: agreed, as: UTF8.self).hasPrefix("completed") { completed += 1 }
        }
        // Most complete (a few may end in a deterministic error): the comparison is of real runs.
        #expect(completed >= 50, "\(completed) of 60 generated programs completed")
    }

    /// What a program sees of a long chunk name: Lua's own way of showing it, cut to fit in 40 bytes.
    @Test func longChunkNamesAreShownCut() throws {
        let outcome = WorkerRunner(executable: Keyhost.binary.path).run(try WorkerRunnerTests.request("""
            local t = ...
            local text = "x = = 1 -- a chunk text longer than forty bytes, on one line"
            local messages = {}
            for _, name in ipairs({ false, "=" .. string.rep("n", 60), "@" .. string.rep("d/", 30) .. "file.lua", "=short", "short text name" }) do
              local _, message = load(text, name or nil)
              messages[#messages + 1] = message
            end
            messages[#messages + 1] = select(2, load("x = = 1\\n-- second line of a chunk text longer than forty bytes"))
            messages[#messages + 1] = select(2, load("x = = 1"))
            t.emit(messages)
            """, limits: Self.limits))
        guard case .completed(let effects, _) = outcome, case .array(let items)? = effects.first else { Issue.record("got \(outcome)"); return }
        let shown = items.map { item -> String in if case .text(let s) = item { return s } else { return "\(item)" } }
        #expect(shown == [
            "[string \"x = = 1 -- a chunk text l...\"]:1: unexpected symbol near '='",
            String(repeating: "n", count: 39) + ":1: unexpected symbol near '='",
            "..." + String(String(repeating: "d/", count: 30).suffix(28)) + "file.lua:1: unexpected symbol near '='",
            "short:1: unexpected symbol near '='",
            "[string \"short text name\"]:1: unexpected symbol near '='",
            "[string \"x = = 1...\"]:1: unexpected symbol near '='",
            "[string \"x = = 1\"]:1: unexpected symbol near '='",
        ], "\(shown)")
    }
}
