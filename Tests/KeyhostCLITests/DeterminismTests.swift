import Foundation
import KeyhostPlayer
import KeyhostWorkerProcess
import KeyhostTokens
import Testing

/// A receipt is checked by running the program again, so a token program must give the same effects
/// in every process. Each program here reached something that differed between two worker processes
/// (docs/lua-api.md, "What a run can depend on"); each runs in two fresh workers, and the effects must
/// be the same bytes.
@Suite struct DeterminismTests {
    static let limits = RunLimits(instructions: 60_000_000, memoryBytes: 32 << 20, timeMillis: 30_000)

    /// McIlroy's adversary ("A killer adversary for quicksort", 1999): it fixes the order of two
    /// items only when the sort first compares them, so the order it ends with is a record of the
    /// pivots the sort chose.
    static let antiquicksort = """
        local n = 600
        local gas, solid, candidate = n + 1, 0, 0
        local value, items = {}, {}
        for i = 1, n do value[i], items[i] = gas, i end
        local function less(x, y)
          if value[x] == gas and value[y] == gas then
            if x == candidate then value[x] = solid else value[y] = solid end
            solid = solid + 1
          end
          if value[x] == gas then candidate = x elseif value[y] == gas then candidate = y end
          return value[x] < value[y]
        end
        table.sort(items, less)
        """

    /// `holes(seed, s, keyof)`: keys made by `keyof(n, x)` come and go in table `s` beside integer keys,
    /// by a fixed pseudo-random walk; returns `#s`. Where keys hash decides which border `#` returns.
    static let holesShape = """
        local function holes(seed, s, keyof)
          local live, n, x = {}, 0, seed
          local function rnd(m) x = (x * 1103515245 + 12345) % 2147483648 return (x >> 8) % m end
          for step = 1, 80 do
            local r = rnd(4)
            if r == 0 then n = n + 1; live[n] = keyof(n, x); s[live[n]] = step
            elseif r == 1 and n > 0 then s[live[rnd(n) + 1]] = nil
            elseif r == 2 then s[rnd(24) + 1] = step
            else s[rnd(24) + 1] = nil end
          end
          return #s
        end
        """

    static let programs: [(String, String)] = [
        ("a fake __metatable does not reveal an address", """
            local t = ...
            local fake = setmetatable({}, { __metatable = { __tostring = true } })
            t.emit { tostring(fake), string.format("%s|%10s", fake, fake), ("%s"):format(fake) }
            """),
        ("table.sort with McIlroy's adversary", """
            local t = ...
            \(antiquicksort)
            t.emit(table.concat(items, ","))
            """),
        ("an order function that is not one still fails the same way", """
            local t = ...
            local items = {}
            for i = 1, 600 do items[i] = (i * 7919) % 601 end
            t.emit { pcall(table.sort, items, function(a, b) return true end) }
            t.emit(table.concat(items, ","))
            """),
        ("# of tables with holes after string keys came and went", """
            local t = ...
            local seed = 7
            local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed // 65536 % n + 1 end
            local lengths = {}
            for trial = 1, 60 do
              local s, width = {}, 8 * trial
              for _ = 1, 6 * width do
                local r = rnd(4)
                if r == 1 then s["s" .. rnd(width)] = true
                elseif r == 2 then s["s" .. rnd(width)] = nil
                elseif r == 3 then s[rnd(width)] = true
                else s[rnd(width)] = nil end
              end
              lengths[trial] = #s
            end
            t.emit(table.concat(lengths, ","))
            """),
        ("# of tables with holes after tables, functions and coroutines came and went as keys", """
            local t = ...
            -- Keys hash by address; after removals, whether a new key reuses a slot or makes the
            -- table grow depends on where keys landed, and the size it grows to on # of holes.
            \(holesShape)
            local function shape(seed, keyof) return holes(seed, {}, keyof) end
            -- Library functions, and the iterators pairs, ipairs and utf8.codes hand out, are C
            -- code: as plain Lua functions they would hash by where the library was loaded.
            local fns = { string.len, string.sub, string.upper, string.lower, string.rep, string.byte, string.char,
              string.reverse, math.abs, math.floor, math.max, math.min, table.insert, table.remove, table.concat,
              table.unpack, select, type, rawget, rawset, rawlen, rawequal, tostring, tonumber, (ipairs({})),
              (utf8.codes("")), (pairs({})), pcall, error, next, setmetatable, getmetatable, coroutine.create,
              ("").rep, t.emit, t.hash.sha256 }
            local lengths = {}
            for seed = 1, 200 do
              lengths[#lengths + 1] = shape(seed, function() return {} end)
              lengths[#lengths + 1] = shape(seed, function(i) return fns[(i - 1) % #fns + 1] end)
              lengths[#lengths + 1] = shape(seed, function() return coroutine.create(function() end) end)
              lengths[#lengths + 1] = shape(seed, function() return function() return seed end end)
            end
            t.emit(table.concat(lengths, ","))
            """),
        ("the library's functions are still themselves", """
            local t = ...
            local f = ipairs({})
            local same = { f == select(1, ipairs({1})), string.format == ("").format, string.len == ("").len,
              (utf8.codes("a")) == (utf8.codes("b")), (utf8.codes("a")) ~= (utf8.codes("a", true)) }
            local seen = {}
            for i, v in ipairs({ 10, 20, 30 }) do seen[#seen + 1] = i * v end
            for _, c in utf8.codes("añb") do seen[#seen + 1] = c end
            for k, v in pairs({ b = 2, a = 1 }) do seen[#seen + 1] = k .. v end
            local ok, message = pcall(ipairs)
            local ok2, message2 = pcall(utf8.codes, "a\\xff")
            t.emit { same, seen, message, message2 }
            """),
        ("weak tables, whose entries would go when the collector ran", """
            local t = ...
            local weak = setmetatable({}, { __mode = "v" })
            local late = setmetatable({}, {})
            getmetatable(late).__mode = "v" -- after setmetatable, where a check there cannot see it
            local kept = {}
            for i = 1, 4000 do
              weak[i], late[i] = {}, {}
              kept[i % 50] = string.rep("x", i % 97) .. i
            end
            local n, m = 0, 0
            for i = 1, 4000 do
              if weak[i] ~= nil then n = n + 1 end
              if late[i] ~= nil then m = m + 1 end
            end
            t.emit { n, m }
            """),
        ("pairs and next over mixed keys", """
            local t = ...
            local set = {}
            for i = 1, 300 do set["k" .. i] = i; set[i * 3] = i end
            for i = 1, 300, 2 do set["k" .. i] = nil end
            set[true], set[false], set[2.5] = 1, 2, 3
            local keys = {}
            for k in pairs(set) do keys[#keys + 1] = tostring(k) end
            t.emit { table.concat(keys, ","), tostring((next(set))) }
            """),
        ("functions, coroutines and errors show no address", """
            local t = ...
            local co = coroutine.create(function() coroutine.yield(1) end)
            local ok, err = pcall(error, {})
            local _, fmt = pcall(string.format, "%p", {})
            local _, loadmsg = load("x x", "=chunk")
            local _, runmsg = pcall(load("local a = nil; return a.b"))
            t.emit { tostring(pairs), tostring(tostring), tostring(function() end), tostring(co), tostring(coroutine.running()),
                     string.format("%s %s", co, t.emit), tostring(err), fmt, loadmsg, runmsg, coroutine.status(co),
                     tostring(select(2, coroutine.resume(co))), tostring(setmetatable({}, { __name = "thing" })) }
            """),
        ("load of texts longer than 40 bytes, each naming its chunk", StringCacheDeterminismTests.loadOfLongTexts),
        ("the collector's and the system's figures are not there", """
            local t = ...
            t.emit { collectgarbage("count"), collectgarbage("step"), collectgarbage(), type(math.random), type(math.randomseed),
                     type(string.dump), type(rawget(_ENV, "os")), type(rawget(_ENV, "io")), type(rawget(_ENV, "print")),
                     select(2, pcall(function() return os end)) }
            """),
    ]

    static func run(_ program: String) throws -> [UInt8]? {
        let outcome = WorkerRunner(executable: Keyhost.binary.path).run(try WorkerRunnerTests.request(program, limits: limits))
        guard case .completed(let effects, _) = outcome else {
            Issue.record("the run did not complete: \(outcome)")
            return nil
        }
        return CBOREncoder.encode(.array(effects))
    }

    @Test(arguments: programs)
    func twoWorkersGiveTheSameEffects(name: String, program: String) throws {
        let first = try Self.run(program), second = try Self.run(program)
        #expect(first != nil && first == second, "\(name)")
    }

    /// A warm worker's later runs reuse the arena of the runs before (kept and wiped, Arena.c), and
    /// load keyhost's own chunks compiled by an earlier run: each program, run there after another
    /// program left other objects behind, must give a fresh worker's effects. (Until keyhost's
    /// chunks were loaded compiled in a process's first run too, the parser's objects in that run's
    /// arena moved the program's tables, and `#` over tables with holes differed.)
    @Test func aWarmWorkersLaterRunsGiveAFreshWorkersEffects() throws {
        let warm = WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 1000)
        defer { warm.stop() }
        let filler = "local t = ... local keep = {} for i = 1, 5000 do keep[{}] = { i } end t.emit(#keep)"
        for (name, program) in Self.programs {
            _ = warm.run(try WorkerRunnerTests.request(filler, limits: Self.limits))
            let outcome = warm.run(try WorkerRunnerTests.request(program, limits: Self.limits))
            guard case .completed(let effects, _) = outcome else {
                Issue.record("\(name): the run did not complete: \(outcome)")
                continue
            }
            #expect(CBOREncoder.encode(.array(effects)) == (try Self.run(program)), "\(name)")
        }
    }

    static func effects(_ program: String) throws -> [CBORValue] {
        let outcome = WorkerRunner(executable: Keyhost.binary.path).run(try WorkerRunnerTests.request(program, limits: limits))
        guard case .completed(let effects, _) = outcome else {
            Issue.record("the run did not complete: \(outcome)")
            return []
        }
        return effects
    }

    static func texts(_ value: CBORValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.map { item in
            switch item {
            case .text(let s): return s
            case .unsigned(let n): return String(n)
            case .bool(let b): return String(b)
            default: return "\(item)"
            }
        }
    }

    @Test func whatTheProgramsSee() throws {
        let programs = Dictionary(uniqueKeysWithValues: Self.programs)
        let fake = try Self.effects(programs["a fake __metatable does not reveal an address"]!)
        #expect(Self.texts(fake.first) == ["table", "table|     table", "table"])

        let sorted = try Self.effects(programs["table.sort with McIlroy's adversary"]!)
        guard case .text(let order)? = sorted.first else { Issue.record("no order: \(sorted)"); return }
        #expect(Set(order.split(separator: ",")).count == 600)

        let invalid = try Self.effects(programs["an order function that is not one still fails the same way"]!)
        let failure = Self.texts(invalid.first)
        #expect(failure.first == "false")
        #expect(failure.last?.hasSuffix("invalid order function for sorting") == true, "\(failure)")

        // Every table is strong, whenever its __mode was set.
        #expect(try Self.effects(programs["weak tables, whose entries would go when the collector ran"]!) == [.array([.unsigned(4000), .unsigned(4000)])])

        let shown = Self.texts(try Self.effects(programs["functions, coroutines and errors show no address"]!).first)
        #expect(Array(shown.prefix(7)) == ["function", "function", "function", "thread", "thread", "thread function", "table"])
        #expect(shown[7].contains("%p shows addresses"))
        #expect(shown[8] == "chunk:1: syntax error near 'x'")
        #expect(shown[9].hasSuffix("attempt to index a nil value (local 'a')"))
        #expect(Array(shown.suffix(3)) == ["suspended", "1", "table"])
        #expect(!shown.joined().contains("0x"))

        let library = try Self.effects(programs["the library's functions are still themselves"]!)
        guard case .array(let parts)? = library.first, parts.count == 4 else { Issue.record("got \(library)"); return }
        #expect(parts[0] == .array(Array(repeating: .bool(true), count: 5)))
        #expect(Self.texts(parts[1]) == ["10", "40", "90", "97", "241", "98", "a1", "b2"])
        #expect(parts[2] == .text("bad argument #1 to 'ipairs' (value expected)"), "\(parts[2])")
        #expect(parts[3] == .text("invalid UTF-8 code"), "\(parts[3])")

        let figures = Self.texts(try Self.effects(programs["the collector's and the system's figures are not there"]!).first)
        #expect(Array(figures.prefix(9)) == ["0", "0", "0", "nil", "nil", "nil", "nil", "nil", "nil"])
        #expect(figures.last?.contains("'os' is not available in the sandbox") == true, "\(figures)")
    }

    /// The tables the host builds (a program's arguments) are built in one order: the nested
    /// tables' addresses, and where their keys land, follow it.
    @Test func hostTablesAreBuiltInOneOrder() throws {
        var request = try WorkerRunnerTests.request("""
            local t = ...
            \(Self.holesShape)
            local shape = holes
            local lengths = {}
            for seed = 1, 200 do
              -- the nested tables as keys: their addresses follow the order they were made in
              lengths[#lengths + 1] = shape(seed, {}, function(n, x) return t.args["k" .. ((n + x) % 40 + 1)] end)
            end
            for i = 1, 40 do
              -- a nested table's own keys: where they landed follows the order they came in
              local nested = t.args["k" .. i]
              lengths[#lengths + 1] = shape(i, nested, function(n, x) return (x % 3 == 0) and ("n" .. (x % 7)) or ("m" .. n) end)
            end
            t.emit(table.concat(lengths, ","))
            """, limits: Self.limits)
        request.arguments = .map((1...40).map { i in
            CBORPair(.text("k\(i)"), .map((0..<7).map { CBORPair(.text("n\($0)"), .unsigned(UInt64($0 * i))) }))
        })
        let runner = WorkerRunner(executable: Keyhost.binary.path)
        let outcomes = (0..<3).map { _ in runner.run(request) }
        guard case .completed(let first, _) = outcomes[0] else { Issue.record("got \(outcomes[0])"); return }
        for outcome in outcomes.dropFirst() {
            guard case .completed(let effects, _) = outcome else { Issue.record("got \(outcome)"); continue }
            #expect(CBOREncoder.encode(.array(effects)) == CBOREncoder.encode(.array(first)))
        }
    }

    /// How deeply coroutines may close one another before keyhost's guard refuses depends on the
    /// worker's stack size, so a program must not be able to catch that and go on.
    @Test func aCaughtCStackOverflowEndsTheRun() throws {
        let program = """
            local t = ...
            local count, coro = 0, false
            for _ = 1, 20000 do
              local previous = coro
              coro = coroutine.create(function()
                local cc <close> = setmetatable({}, { __close = function()
                  count = count + 1
                  if previous then assert(coroutine.close(previous)) end
                end })
                coroutine.yield()
              end)
              assert(coroutine.resume(coro))
            end
            local ok, message = coroutine.close(coro)
            t.emit { ok, #tostring(message) }
            t.emit(count)
            """
        let outcome = WorkerRunner(executable: Keyhost.binary.path).run(
            try WorkerRunnerTests.request(program, limits: RunLimits(instructions: 60_000_000, memoryBytes: 256 << 20, timeMillis: 30_000)))
        guard case .failed("program", let message) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(message.contains("C stack overflow"), "\(message)")
    }

    /// The same through the wallet: a receipt of a program that sorts with the adversary verifies,
    /// and one of a program that loads long texts (issue 31, B: it failed to verify 3 times in 3).
    @Test(arguments: [
        "local t = ...\n\(antiquicksort)\nt.emit(table.concat(items, \",\"))\n",
        StringCacheDeterminismTests.loadOfLongTexts,
    ])
    func aReceiptOfAnAdversarialProgramVerifies(program: String) throws {
        let dir = try Keyhost.scratch(["p.lua": program])
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["HOME": dir.path, "ISSUER": String(repeating: "11", count: 32)]
        let wallet = try Keyhost.run(["token", "wallet", "init", "--wallet", "w.db", "--json"], cwd: dir, environment: env)
        #expect(wallet.status == 0, "\(wallet.stderr)")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(wallet.stdout.utf8)) as? [String: Any])
        let holder = try #require(info["holder"] as? String)
        let issued = try Keyhost.run(["token", "issue", "--program", "p.lua", "--value", "5", "--unit", "pt", "--to", holder,
                                      "--issuer-key-env", "ISSUER", "-o", "t.tok"], cwd: dir, environment: env)
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(try Keyhost.run(["token", "import", "--wallet", "w.db", "t.tok"], cwd: dir, environment: env).status == 0)
        let list = try #require(try JSONSerialization.jsonObject(
            with: Data(try Keyhost.run(["token", "list", "--wallet", "w.db", "--json"], cwd: dir, environment: env).stdout.utf8)) as? [String: Any])
        let id = try #require(((list["tokens"] as? [[String: Any]])?.first?["id"]) as? String)
        let ran = try Keyhost.run(["token", "run", "--wallet", "w.db", id, "--receipt", "r.txt"], cwd: dir, environment: env)
        #expect(ran.status == 0, "\(ran.stderr)")
        let verified = try Keyhost.run(["token", "verify-receipt", "r.txt"], cwd: dir, environment: env)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }
}
