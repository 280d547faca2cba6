// LuaRuntime owns lua_State. How it keeps Lua's longjmp out of Swift frames:
//
// 1. Lua calls Swift only through kh_trampoline (C). A Swift binding returns a
//    count or throws; the dispatcher turns a throw into a status code, and the
//    trampoline raises only after the Swift frame has returned.
// 2. Swift calls only Lua API functions that cannot raise ('-' in the manual's
//    §4.4 tags) or that can raise only a memory error ('m'). Memory errors cannot
//    happen while Swift runs: the allocator pauses the cap (kh_host.enforce) for
//    the duration of every Swift frame and aborts on a real malloc failure, as
//    Swift itself does. Everything tagged 'e' or 'v' (metamethods, lua_next,
//    luaL_tolstring, opening libraries, calling functions) goes through a kh_p_*
//    helper that runs it under lua_pcall.
// 3. C types stay here: other modules see LuaState, LuaContext and LuaValue only.
//    LongjmpSafetyTests greps this module for raising API names so a slip fails CI.
import CKeyhostLua
import CLua
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a state may do.
public enum LuaProfile: Sendable, Equatable {
    /// All standard libraries, `require` with keyhost's modules, stdlib search roots.
    case full
    /// Untrusted code: allow-listed libraries, text chunks only, limits enforced.
    case sandbox(SandboxLimits)
    /// The sandbox with every source of non-determinism removed, for token programs: a run
    /// depends only on its inputs (no print, randomness, memory figures or addresses; `pairs`
    /// and `next` in a fixed key order). See `Prelude.deterministic`.
    case deterministicSandbox(SandboxLimits)

    /// The limits when the profile is a sandbox.
    public var sandboxLimits: SandboxLimits? {
        switch self {
        case .full: return nil
        case .sandbox(let limits), .deterministicSandbox(let limits): return limits
        }
    }
}

/// Limits for sandboxed code; each violation raises its own error.
public struct SandboxLimits: Sendable, Equatable {
    public var memoryBytes: Int
    public var instructions: UInt64
    public var seconds: Double

    public init(memoryBytes: Int = 64 << 20, instructions: UInt64 = 100_000_000, seconds: Double = 5) {
        self.memoryBytes = memoryBytes
        self.instructions = instructions
        self.seconds = seconds
    }
}

extension SandboxLimits {
    /// Address space a deterministic state reserves for its object arena (Arena.c), on top of
    /// what it allocates from malloc: a process limiting its own address space must allow it.
    public static func addressSpaceReserved(memoryBytes: Int) -> Int {
        Int(clamping: kh_arena_reservation(max(0, memoryBytes)))
    }
}

/// A Lua 5.4 interpreter state and the Swift functions registered in it.
public final class LuaState {
    /// Holds the raw state so references can tell whether it is still open.
    final class Owner {
        var L: OpaquePointer?
        init(_ L: OpaquePointer) { self.L = L }
    }

    let owner: Owner
    let L: OpaquePointer
    private let host: UnsafeMutablePointer<kh_host>
    public private(set) var profile: LuaProfile
    private var sandboxEnvironment: LuaReference?
    private var sandboxExports: LuaReference?
    private var helpers: [String: LuaReference] = [:]

    /// Creates a state with the libraries of `profile` opened.
    public init(profile: LuaProfile = .full) throws {
        LuaDispatch.install()
        host = .allocate(capacity: 1)
        let created: OpaquePointer?
        if case .deterministicSandbox(let limits) = profile {
            created = kh_newstate_deterministic(host, max(0, limits.memoryBytes))
        } else {
            created = kh_newstate(host)
        }
        guard let L = created else {
            host.deallocate()
            if case .deterministicSandbox = profile {
                throw LuaError.setup("cannot create a Lua state for a token program: the address space for its objects (about 1.5 times its memory limit) could not be reserved")
            }
            throw LuaError.setup("cannot create a Lua state (out of memory)")
        }
        self.L = L
        self.owner = Owner(L)
        self.profile = profile
        host.pointee.owner = Unmanaged.passUnretained(owner).toOpaque()
        do {
            try setUp()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Lowers the limits of a sandboxed state that has run nothing yet: a state made ahead of
    /// time, before the limits of the run it will serve were known. Only lowers: the object
    /// arena was reserved for the memory limit the state was made with. False (nothing changed)
    /// for a state without limits or when `limits` asks for more memory than it was made with.
    public func lowerLimits(to limits: SandboxLimits) -> Bool {
        guard let made = profile.sandboxLimits, limits.memoryBytes <= made.memoryBytes, limits.memoryBytes >= 0 else { return false }
        switch profile {
        case .deterministicSandbox: profile = .deterministicSandbox(limits)
        case .sandbox: profile = .sandbox(limits)
        case .full: return false
        }
        host.pointee.limit = limits.memoryBytes
        host.pointee.budget = limits.instructions
        host.pointee.time_limit = limits.seconds
        return true
    }

    private func close() {
        guard owner.L != nil else { return }
        owner.L = nil
        kh_close(L) // errors in __gc become warnings, never longjmps
        host.deallocate()
    }

    var stack: LuaStack { LuaStack(L: L) }

    private func setUp() throws {
        var libraries: Int32 = profile.sandboxLimits != nil ? 1 : 0
        if case .deterministicSandbox = profile {
            // First, while the state holds only Lua's own strings (see Determinism.c).
            guard kh_make_deterministic(L) != 0 else {
                throw LuaError.setup("this Lua library's internals are not the Lua 5.4.4 layout the deterministic sandbox knows, so token programs cannot run deterministically with it")
            }
            libraries = 2
        }
        if kh_p_openlibs(L, libraries) != LUA_OK { throw LuaError.setup(popMessage()) }
        if let limits = profile.sandboxLimits {
            if case .deterministicSandbox = profile {
                try execute(internal: Prelude.deterministic, chunkName: "=deterministic")
            }
            let results = try execute(internal: Prelude.sandbox, chunkName: "=sandbox")
            guard results.count == 2, case .reference(let makeEnvironment) = results[0], case .reference(let exports) = results[1]
            else { throw LuaError.setup("sandbox prelude returned no environment") }
            sandboxEnvironment = makeEnvironment
            sandboxExports = exports
            host.pointee.limit = limits.memoryBytes
            host.pointee.budget = limits.instructions
            host.pointee.time_limit = limits.seconds
            kh_enable_hook(L, 1000)
        } else {
            // The helpers come back as plain values, not a table: converting a table here would
            // instantiate the table conversion's generic types at every start, for one function.
            let results = try execute(Prelude.full, chunkName: "=prelude")
            guard case .reference(let addRoot)? = results.first else { throw LuaError.setup("prelude returned no helpers") }
            helpers["add_root"] = addRoot
        }
    }

    /// Turns on the count hook so Ctrl-C (`interruptOnSIGINT`) can stop running code.
    public func enableInterrupts() { kh_enable_hook(L, 1000) }

    /// Whether Ctrl-C stopped the last call (its "interrupted" error may have been caught on the way out).
    public var wasInterrupted: Bool { host.pointee.interrupt_hit != 0 }

    /// Runs `body` with SIGINT routed to the running Lua code instead of ending the process.
    public func interruptOnSIGINT<T>(_ body: () throws -> T) rethrows -> T {
        kh_sigint_begin(L)
        defer { kh_sigint_end() }
        return try body()
    }

    // MARK: running code

    /// Compiles and runs `code`, returning its results.
    @discardableResult
    public func execute(_ code: String, chunkName: String, arguments: [LuaValue] = []) throws -> [LuaValue] {
        try execute(bytes: Array(code.utf8), chunkName: chunkName, arguments: arguments)
    }

    /// Runs keyhost's own Lua `code` (a prelude, the token capability: constant text, never a
    /// user's), compiled once per process: later states load the compiled chunk and skip the parser,
    /// which is most of what setting up a sandboxed state costs.
    ///
    /// A deterministic state loads the compiled chunk every time, the first too (compiled in a state
    /// of its own): the parser's objects come from the state's arena, so a process's first run
    /// would otherwise lay out the program's tables and closures at other addresses than its later
    /// runs, and a `#` over a table with holes could differ between a fresh worker and a warm one.
    @discardableResult
    public func execute(internal code: String, chunkName: String, arguments: [LuaValue] = []) throws -> [LuaValue] {
        var compiled = Self.compiledChunks.withLock { $0[code] }
        if compiled == nil, case .deterministicSandbox = profile {
            var size = 0
            compiled = Self.cache(kh_compile(code, code.utf8.count, chunkName, &size), size: size, for: code)
        }
        if let compiled {
            try load(bytes: compiled, chunkName: chunkName, binary: true)
        } else {
            try load(bytes: Array(code.utf8), chunkName: chunkName)
            var size = 0
            Self.cache(kh_dump(L, &size), size: size, for: code)
        }
        return try callLoaded(arguments: arguments)
    }

    /// Keeps a dumped chunk (freed here) as `code`'s compiled form; nil when there is none.
    @discardableResult
    private static func cache(_ dumped: UnsafeMutablePointer<CChar>?, size: Int, for code: String) -> [UInt8]? {
        guard let dumped else { return nil }
        let compiled = Array(UnsafeRawBufferPointer(start: dumped, count: size))
        free(dumped)
        compiledChunks.withLock { $0[code] = compiled }
        return compiled
    }

    /// `execute(internal:)`'s compiled chunks, by source text.
    private static let compiledChunks = Mutex<[String: [UInt8]]>([:])

    /// Compiles and runs `bytes` (source text; binary chunks are refused in every profile).
    @discardableResult
    public func execute(bytes: [UInt8], chunkName: String, arguments: [LuaValue] = []) throws -> [LuaValue] {
        try load(bytes: bytes, chunkName: chunkName)
        return try callLoaded(arguments: arguments)
    }

    /// Compiles and runs `bytes` for its effects: whatever the chunk returns is dropped, never converted.
    public func run(bytes: [UInt8], chunkName: String, arguments: [LuaValue] = []) throws {
        try load(bytes: bytes, chunkName: chunkName)
        try callLoaded(arguments: arguments, convertResults: false)
    }

    /// Calls a Lua function held by reference (from the host, not from inside a binding: use `LuaContext.call` there).
    @discardableResult
    public func call(_ function: LuaReference, _ arguments: [LuaValue] = []) throws -> [LuaValue] {
        try stack.ensure(2)
        try stack.push(.reference(function))
        return try callLoaded(arguments: arguments)
    }

    /// Calls the global function `name` (e.g. a REPL helper).
    @discardableResult
    public func callGlobal(_ name: String, _ arguments: [LuaValue] = []) throws -> [LuaValue] {
        guard case .reference(let fn) = global(name) else { throw LuaError.runtime("global '\(name)' is not a function") }
        return try call(fn, arguments)
    }

    /// Runs a Lua 5.4 binary chunk for its effects. Lua does not verify bytecode and a hostile
    /// chunk can corrupt memory, so the caller must have established that the bytes come from
    /// someone it trusts (a token issuer on the wallet's list, signature checked); the header is
    /// checked here against this build's exact format.
    public func run(trustedBytecode bytes: [UInt8], chunkName: String, arguments: [LuaValue] = []) throws {
        try LuaBytecode.checkHeader(bytes)
        try load(bytes: bytes, chunkName: chunkName, binary: true)
        try callLoaded(arguments: arguments, convertResults: false)
    }

    private func load(bytes: [UInt8], chunkName: String, binary: Bool = false) throws {
        // Text only, in every profile, unless the caller vouched for the bytes
        // (`run(trustedBytecode:)`): Lua does not verify bytecode (docs/sandbox-lua-bugs.md, bug 11).
        if bytes.first == 0x1B && !binary {
            throw LuaError.syntax("\(Self.displayName(chunkName)): binary chunks are not accepted: Lua does not verify bytecode, and a corrupted or hostile one can crash keyhost; run the source instead")
        }
        let mode = binary ? "b" : "t"
        let status = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { kh_load(L, $0.baseAddress, buf.count, chunkName, mode) }
        }
        if status != LUA_OK {
            let message = popMessage()
            if status == LUA_ERRMEM {
                if host.pointee.cap_hit != 0 { throw LuaError.memoryLimit(bytes: host.pointee.limit) }
                throw LuaError.setup("not enough memory to load \(chunkName)")
            }
            throw LuaError.syntax(message)
        }
        if let env = sandboxEnvironment {
            // A fresh environment per chunk: one program cannot leave globals for the next.
            let results = try call(env)
            try stack.push(results.first ?? .nil)
            _ = lua_setupvalue(L, -2, 1)
        }
    }

    /// A chunk name as Lua shows it: `@file` and `=name` without their marker.
    static func displayName(_ chunkName: String) -> String {
        guard let first = chunkName.first, first == "@" || first == "=" else { return chunkName }
        return String(chunkName.dropFirst())
    }

    /// Calls the function on top of the stack with `arguments`.
    @discardableResult
    private func callLoaded(arguments: [LuaValue], convertResults: Bool = true) throws -> [LuaValue] {
        let base = lua_gettop(L) - 1
        try stack.ensure(Int32(clamping: arguments.count + 4))
        for argument in arguments { try stack.push(argument) }
        kh_begin_run(L)
        let status = kh_pcall(L, Int32(arguments.count), convertResults ? LUA_MULTRET : 0, 1)
        if status != LUA_OK { throw translateError(status: status) }
        defer { lua_settop(L, base) }
        // A limit that was hit fails the run even if the code caught the error on its way out
        // (`return pcall(f)` leaves no instruction for the hook to stop); and a single long call
        // into C cannot be stopped half-way, but it must not pass unnoticed.
        if host.pointee.budget_hit != 0 { throw LuaError.instructionBudget(host.pointee.budget) }
        if host.pointee.time_hit != 0 || kh_overran(L) != 0 { throw LuaError.timeLimit(seconds: host.pointee.time_limit) }
        // In the deterministic sandbox a caught memory error fails the run too: where the cap
        // falls depends on this build's allocation sizes, so a run that survived it would
        // not re-run the same elsewhere.
        if case .deterministicSandbox = profile, host.pointee.cap_hit != 0 { throw LuaError.memoryLimit(bytes: host.pointee.limit) }
        // Likewise the C stack guard: how deep it lets coroutines nest depends on this process's stack size.
        if case .deterministicSandbox = profile, host.pointee.stack_hit != 0 { throw Self.stackError }
        return convertResults ? try stack.values(above: base) : []
    }

    private func translateError(status: Int32) -> LuaError {
        let message = popMessage()
        let h = host.pointee
        if h.budget_hit != 0 { return .instructionBudget(h.budget) }
        if case .deterministicSandbox = profile, h.cap_hit != 0 { return .memoryLimit(bytes: h.limit) }
        if case .deterministicSandbox = profile, h.stack_hit != 0 { return Self.stackError }
        if h.time_hit != 0 { return .timeLimit(seconds: h.time_limit) }
        if h.cap_hit != 0 && (status == LUA_ERRMEM || message.contains("sandbox: memory limit")) {
            return .memoryLimit(bytes: h.limit)
        }
        if h.interrupt_hit != 0 { return .interrupted }
        return .runtime(message)
    }

    private static let stackError = LuaError.runtime("C stack overflow (coroutines closed inside one another too deeply); in a token program this ends the run even when caught")

    private func popMessage() -> String {
        defer { kh_pop(L, 1) }
        return stack.describe(at: -1)
    }

    // MARK: globals and modules

    /// Reads a global without running metamethods.
    public func global(_ name: String) -> LuaValue {
        lua_rawgeti(L, kh_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        stack.pushText(name)
        lua_rawget(L, -2)
        defer { kh_pop(L, 2) }
        return (try? stack.value(at: -1)) ?? .nil
    }

    /// Pushes the table that globals set by the host go to: the globals table, or in the sandbox the exports.
    private func pushHostGlobals() {
        if let exports = sandboxExports {
            lua_rawgeti(L, kh_registryindex(), lua_Integer(exports.ref))
        } else {
            lua_rawgeti(L, kh_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        }
    }

    /// Sets a global without running metamethods (in the sandbox: visible to every chunk run after).
    public func setGlobal(_ name: String, _ value: LuaValue) throws {
        pushHostGlobals()
        stack.pushText(name)
        try stack.push(value)
        lua_rawset(L, -3)
        kh_pop(L, 1)
    }

    /// Sets a global to a Swift function.
    public func setGlobal(_ name: String, function body: @escaping LuaFunctionBody) {
        pushHostGlobals()
        stack.pushText(name)
        LuaDispatch.push(body, on: L)
        lua_rawset(L, -3)
        kh_pop(L, 1)
    }

    /// A Swift function as a Lua value, to pass to a chunk or keep in a table.
    public func makeFunction(_ body: @escaping LuaFunctionBody) -> LuaValue {
        LuaDispatch.push(body, on: L)
        defer { kh_pop(L, 1) }
        return .reference(stack.reference(at: -1))
    }

    /// Makes `require(name)` build the module from `define` (full profile only).
    public func registerModule(_ name: String, _ define: @escaping (inout LuaModule) -> Void) {
        kh_pushtext(L, kh_preload_table_key())
        lua_rawget(L, kh_registryindex())
        guard lua_type(L, -1) == LUA_TTABLE else { kh_pop(L, 1); return }
        stack.pushText(name)
        LuaDispatch.push({ ctx in
            var module = LuaModule(name: name)
            define(&module)
            try module.push(on: ctx)
            return 1
        }, on: L)
        lua_rawset(L, -3)
        kh_pop(L, 1)
    }

    /// Adds a folder searched by `require` for `name.lua` and `name/init.lua`,
    /// with chunk names `@<chunkPrefix>/<relative path>` (or the full path when no prefix is given).
    public func addSearchRoot(_ directory: String, chunkPrefix: String? = nil) throws {
        try callGlobalHelper("add_root", [.text(directory), chunkPrefix.map(LuaValue.text) ?? .nil])
    }

    private func callGlobalHelper(_ name: String, _ args: [LuaValue]) throws {
        guard let helper = helpers[name] else { throw LuaError.setup("'\(name)' is not available in this profile") }
        try call(helper, args)
    }

    /// Bytes currently allocated by this state.
    public var memoryInUse: Int { host.pointee.used }
}

extension LuaState {
    /// Registers `keyhost.bench`: `add` in Swift and `c_add` in plain C, for the binding benchmark.
    public func registerBenchmarkModule() {
        kh_push_c_add(L)
        let cAdd = stack.reference(at: -1)
        kh_pop(L, 1)
        registerModule("keyhost.bench") { module in
            module.function("add") { ctx in
                let (a, b) = (try ctx.integer(1), try ctx.integer(2))
                ctx.push(a &+ b)
                return 1
            }
            module.value("c_add", .reference(cAdd))
        }
    }
}
