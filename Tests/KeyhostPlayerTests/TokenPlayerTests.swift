#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto
import KeyhostTokens
import LuaRuntime
import Testing
@testable import KeyhostPlayer

/// The player: what a token program can see and do, and how each way of failing is reported.
@Suite struct TokenPlayerTests {
    static let issuerKey = try! PrivateKey(bytes: Array(repeating: 0x11, count: 32))
    static let holderKey = try! PrivateKey(bytes: Array(repeating: 0x22, count: 32))

    static func token(_ program: String, kind: TokenProgram.Kind = .luaSource, code: [UInt8]? = nil, value: UInt64 = 500) throws -> SignedToken {
        let token = Token(
            id: Array(0..<32), issuer: issuerKey.publicKey.xOnly, value: value, unit: "EUR-cent", expires: 2_000_000_000,
            program: TokenProgram(kind: kind, code: code ?? Array(program.utf8)), holder: holderKey.publicKey,
            metadata: .map([CBORPair(.text("campaign"), .text("spring"))])
        )
        return try SignedToken.issue(token, issuerKey: issuerKey)
    }

    static let player = TokenPlayer(helperModules: [
        "hex": try! readRepoFile("stdlib/keyhost/hex.lua"), "json": try! readRepoFile("stdlib/keyhost/json.lua"),
    ])

    static func run(_ program: String, args: CBORValue = .map([]), now: Int64 = 1_800_000_000,
                    limits: RunLimits = RunLimits(instructions: 20_000_000, memoryBytes: 8 << 20, timeMillis: 2_000)) throws -> RunOutcome {
        player.run(RunRequest(token: try token(program), arguments: args, now: now, limits: limits, bytecodeAllowed: false))
    }

    static func effects(_ program: String, args: CBORValue = .map([])) throws -> [CBORValue] {
        let outcome = try run(program, args: args)
        guard case .completed(let effects, _) = outcome else {
            Issue.record("expected the run to complete, got \(outcome)")
            return []
        }
        return effects
    }

    @Test func programSeesTokenArgumentsAndNow() throws {
        let effects = try Self.effects("""
            local t = ...
            t.emit { value = t.token.value, unit = t.token.unit, who = t.args.who, now = t.now,
                     campaign = t.token.meta.campaign, id = t.hex.encode(t.token.id):sub(1, 8) }
            """, args: .map([CBORPair(.text("who"), .text("alice"))]))
        #expect(effects.map(CBOREncoder.encode) == [CBOREncoder.encode(.map([
            CBORPair(.text("value"), .unsigned(500)), CBORPair(.text("unit"), .text("EUR-cent")), CBORPair(.text("who"), .text("alice")),
            CBORPair(.text("now"), .unsigned(1_800_000_000)), CBORPair(.text("campaign"), .text("spring")), CBORPair(.text("id"), .text("00010203")),
        ]))])
    }

    @Test func helpersAreThereAndPure() throws {
        let effects = try Self.effects("""
            local t = ...
            t.emit(t.hex.encode(t.hash.sha256("abc")))
            t.emit(t.json.encode({ b = 1, a = { 1, 2 } }))
            local key = t.token.issuer
            t.emit(t.verify.schnorr(key, string.rep("\\0", 32), string.rep("\\0", 64)))
            """)
        #expect(effects == [
            .text("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            .text(#"{"a":[1,2],"b":1}"#),
            .bool(false),
        ])
    }

    /// Nothing in the program's reach varies between two runs with the same inputs.
    @Test func runsAreDeterministic() throws {
        let program = """
            local t = ...
            local keys = {}
            local set = {}
            for i = 1, 200 do set["k" .. i] = i end
            set[3.5], set[true], set[-7] = 1, 1, 1
            for k in pairs(set) do keys[#keys + 1] = tostring(k) end
            t.emit(table.concat(keys, ","))
            local first = next(set)
            t.emit(tostring(first))
            t.emit(tostring({}) .. " " .. tostring(pairs) .. " " .. tostring(function() end) .. " " .. string.format("%s", {}))
            t.emit(collectgarbage("count"))
            t.emit(type(math.random) .. type(print) .. type(rawget(_ENV, "os")) .. type(rawget(_ENV, "io")))
            """
        let a = try Self.effects(program), b = try Self.effects(program)
        #expect(a == b)
        guard case .text(let order)? = a.first else { Issue.record("no key order"); return }
        #expect(order.hasPrefix("-7,3.5,k1,k10,k100,k101"))
        #expect(order.hasSuffix("k98,k99,true"))
        #expect(a[1] == .text("-7"))
        #expect(a[2] == .text("table function function table"))
        #expect(a[3] == .unsigned(0))
        #expect(a[4] == .text("nilnilnilnil"))
    }

    /// The read-only views (the capability, its tables, the libraries) iterate, in key order.
    @Test func readOnlyViewsIterateInOrder() throws {
        let effects = try Self.effects("""
            local t = ...
            local function keys(view) local k = {} for name in pairs(view) do k[#k + 1] = name end return table.concat(k, ",") end
            t.emit(keys(t.args))
            t.emit(keys(t.verify))
            t.emit(keys(t):match("^args,emit,hash,holder,hops,now,token,transfer,verify") ~= nil)
            t.emit(keys(math):sub(1, 13))
            """, args: .map([CBORPair(.text("b"), .unsigned(2)), CBORPair(.text("a"), .unsigned(1))]))
        #expect(effects == [.text("a,b"), .text("ecdsa,schnorr"), .bool(true), .text("abs,acos,asin")])
    }

    @Test func addressRevealingFormatsAreRefused() throws {
        let outcome = try Self.run("return string.format('%p', {})")
        guard case .failed("program", let message) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(message.contains("%p shows addresses"))
        let keyed = try Self.run("local t = {} t[{}] = 1 for k in pairs(t) do end")
        guard case .failed("program", let m2) = keyed else { Issue.record("got \(keyed)"); return }
        #expect(m2.contains("no fixed iteration order"))
    }

    @Test(arguments: [
        ("while true do end", "instruction_limit"),
        ("local t = {} for i = 1, 100 do t[i] = ('x'):rep(1 << 20) .. i end", "memory_limit"),
        ("local function f() return 1 + f() end f()", "memory_limit"),
        ("local function f() return 1 + f() end pcall(f) error('after')", "memory_limit"),
        ("error('no')", "program"),
        ("this is not lua", "syntax"),
        ("local t = ... t.emit(1.5)", "effects"),
        ("local t = ... pcall(t.emit, 0.5) t.emit(1)", "effects"),
        ("local t = ... for i = 1, 2000 do pcall(t.emit, i) end", "effects"),
        ("local t = ... t.emit(pairs)", "effects"),
        ("local t = ... t.emit(setmetatable({}, {__index = function() error('x') end}))", "effects"),
    ])
    func failuresAreReportedByKind(program: String, kind: String) throws {
        let outcome = try Self.run(program)
        #expect(outcome.kindName == kind, "\(program): \(outcome)")
    }

    @Test func wallClockLimitStopsALongRun() throws {
        let outcome = try Self.run("while true do end", limits: RunLimits(instructions: 1 << 40, memoryBytes: 8 << 20, timeMillis: 200))
        #expect(outcome.kindName == "time_limit")
    }

    @Test func capabilityIsReadOnlyAndHidesItsMetatable() throws {
        for program in ["local t = ... t.now = 1", "local t = ... t.token.value = 1",
                        "local t = ... setmetatable(t, nil)"] {
            let outcome = try Self.run(program)
            if case .completed(let effects, _) = outcome { #expect(effects == [.null], "\(program)") }
        }
        #expect(try Self.effects("local t = ... t.emit(getmetatable(t) == false)") == [.bool(true)])
    }

    @Test func bytecodeNeedsTrustAndTheExactFormat() throws {
        let state = try LuaState()
        guard case .string(let dumped)? = try state.execute("return string.dump(load('local t = ... t.emit(\"from bytecode\")'))", chunkName: "=t").first
        else { Issue.record("no dump"); return }
        let limits = RunLimits(instructions: 1_000_000, memoryBytes: 8 << 20, timeMillis: 2_000)
        let token = try Self.token("", kind: .luaBytecode, code: dumped)
        let untrusted = Self.player.run(RunRequest(token: token, arguments: .map([]), now: 0, limits: limits, bytecodeAllowed: false))
        #expect(untrusted.kindName == "refused")
        let trusted = Self.player.run(RunRequest(token: token, arguments: .map([]), now: 0, limits: limits, bytecodeAllowed: true))
        #expect(trusted == .completed(effects: [.text("from bytecode")]))
        var otherVersion = dumped
        otherVersion[4] = 0x53
        var truncated = Array(dumped.prefix(dumped.count - 5))
        for (code, expected) in [(otherVersion, "made for Lua 5.3"), (Array(dumped.prefix(20)), "truncated"), (truncated, "truncated")] {
            let outcome = Self.player.run(RunRequest(token: try Self.token("", kind: .luaBytecode, code: code), arguments: .map([]),
                                                     now: 0, limits: limits, bytecodeAllowed: true))
            guard case .failed(let kind, let message) = outcome else { Issue.record("bytecode accepted"); continue }
            #expect(kind == "refused" || kind == "syntax")
            #expect(message.contains(expected), "\(message)")
        }
        truncated.removeAll()
    }
}

extension RunOutcome {
    var kindName: String {
        switch self {
        case .completed: return "completed"
        case .failed(let kind, _): return kind
        }
    }
}

func readRepoFile(_ relative: String) throws -> [UInt8] {
    var dir = #filePath
    for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
    let path = dir + "/" + relative
    guard let file = fopen(path, "rb") else { throw LuaError.setup("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return bytes
}

/// CBOR integers beyond Lua's range reach a program as decimal text, the smallest one included.
@Suite struct RecordConversionRangeTests {
    @Test func integersOutsideLuaRangeAreDecimalText() {
        #expect(RecordConversion.lua(.negative(.max)) == .text("-18446744073709551616"))
        #expect(RecordConversion.lua(.negative(UInt64(Int64.max))) == .integer(Int64.min))
        #expect(RecordConversion.lua(.negative(UInt64(Int64.max) + 1)) == .text("-9223372036854775809"))
        #expect(RecordConversion.lua(.unsigned(.max)) == .text("18446744073709551615"))
    }
}
