import KeyhostCrypto
import KeyhostTokens
import LuaRuntime

/// Runs one token's program in a deterministic sandbox and collects what it emits. It holds no
/// store and no keys: the wallet decides, commits and signs. Normally used inside the worker
/// process (`keyhost token _worker`), so that a crash here cannot touch the wallet.
public struct TokenPlayer {
    /// Lua sources of the pure helper modules the capability offers (`hex`, `json`), by name.
    public var helperModules: [String: [UInt8]]

    /// A sandboxed state made ahead of time by `prepare()`, taken by the first run that fits it.
    private let ready = ReadyState()

    public init(helperModules: [String: [UInt8]]) {
        self.helperModules = helperModules
    }

    /// Holds at most one state that has run nothing; taking it leaves none, so no state serves two runs.
    final class ReadyState {
        var state: LuaState?
        /// The warm-up's request, encoded: a forked child decodes it again while it waits, so that
        /// the pages a decode writes are its own before its real request comes.
        var warmUpRequest: [UInt8] = []

        func take(for limits: SandboxLimits) -> LuaState? {
            guard let state, state.lowerLimits(to: limits) else { return nil }
            self.state = nil
            return state
        }
    }

    /// Initialises what any run touches (the lazily opened libraries, secp256k1's context, the Swift
    /// runtime's type and conformance caches, lazily bound symbols) by decoding and running keyhost's
    /// own constant warm-up program on a made-up token: a fork server does this once, so that its
    /// children start with it done. No token's program runs here, and the warm-up's state is closed.
    public func prepare() {
        for f in [Hash.sha256, Hash.sha512, Hash.sha256d, Hash.hash160, Hash.ripemd160, Hash.keccak256] { _ = f([]) }
        _ = Hash.hmacSHA256(key: [1], data: [])
        guard let key = try? PrivateKey(bytes: Hash.sha256(Array("keyhost warm-up".utf8))) else { return }
        let program = "local t = ... t.emit{ v = t.token.value, h = t.hash.sha256(t.token.id) }"
        let token = Token(id: Array(repeating: 1, count: 32), issuer: key.publicKey.xOnly, value: 1, unit: "warm-up",
                          program: TokenProgram(kind: .luaSource, code: Array(program.utf8)), holder: key.publicKey)
        guard let signed = try? SignedToken.issue(token, issuerKey: key) else { return }
        let request = RunRequest(token: signed, arguments: .map([CBORPair(.text("a"), .unsigned(1))]), now: 0,
                                 limits: .walletDefault, bytecodeAllowed: false)
        ready.warmUpRequest = request.encoded
        guard let decoded = try? RunRequest(encoded: ready.warmUpRequest) else { return }
        let outcome = run(decoded)
        _ = try? RunOutcome(encoded: outcome.encoded)
        // The state the next run will use, set up now: made after the warm-up, so it has run nothing.
        // In a fork server every child gets its own copy of it, and the server itself never runs it.
        ready.state = try? LuaState(profile: .deterministicSandbox(SandboxLimits(RunLimits.walletDefault)))
    }

    /// In a child forked after `prepare()`, before its request comes: touches what a run writes
    /// (the decoder's and allocator's pages, copied on first write) without running anything, so
    /// that this work overlaps the previous run instead of lengthening this one.
    public func prepareChild() {
        _ = try? RunRequest(encoded: ready.warmUpRequest)
    }

    /// Runs the request's program; never throws: every failure is an outcome.
    public func run(_ request: RunRequest) -> RunOutcome {
        let token = request.token.token
        if token.program.kind == .luaBytecode {
            guard request.bytecodeAllowed else {
                return .failed(kind: "refused", message: "the program is bytecode and its issuer \(token.issuer) is not trusted by this wallet")
            }
            do { try LuaBytecode.checkHeader(token.program.code) } catch {
                return .failed(kind: "refused", message: String(describing: error))
            }
        }
        let limits = SandboxLimits(request.limits)
        let state: LuaState
        if let made = ready.take(for: limits) {
            state = made
        } else {
            do { state = try LuaState(profile: .deterministicSandbox(limits)) } catch {
                return .failed(kind: "setup", message: String(describing: error))
            }
        }
        let emitted = Emitted()
        do {
            let capability = try makeCapability(in: state, request: request, emitted: emitted)
            let chunkName = "=token " + Hex.encode(Array(token.id.prefix(4)))
            switch token.program.kind {
            case .luaSource: try state.run(bytes: token.program.code, chunkName: chunkName, arguments: [capability])
            case .luaBytecode: try state.run(trustedBytecode: token.program.code, chunkName: chunkName, arguments: [capability])
            }
        } catch let error as LuaError {
            return Self.outcome(error, emitted: emitted)
        } catch {
            return .failed(kind: "program", message: String(describing: error))
        }
        if let problem = emitted.problem { return .failed(kind: "effects", message: problem) }
        return .completed(effects: emitted.records, transferred: emitted.transferred)
    }

    private static func outcome(_ error: LuaError, emitted: Emitted) -> RunOutcome {
        // An invalid record fails the run even when the program caught the error.
        if let problem = emitted.problem { return .failed(kind: "effects", message: problem) }
        switch error {
        case .syntax(let m): return .failed(kind: "syntax", message: m)
        case .runtime(let m): return .failed(kind: "program", message: m)
        case .memoryLimit: return .failed(kind: "memory_limit", message: error.description)
        case .instructionBudget: return .failed(kind: "instruction_limit", message: error.description)
        case .timeLimit: return .failed(kind: "time_limit", message: error.description)
        case .interrupted: return .failed(kind: "interrupted", message: error.description)
        case .setup(let m): return .failed(kind: "setup", message: m)
        }
    }

    /// Records emitted so far, and the first reason the effects are unusable.
    final class Emitted {
        var records: [CBORValue] = []
        var bytes = 1
        var problem: String?
        var transferred = false
    }

    /// Builds the one object the program may act through (see `Capability.lua`).
    private func makeCapability(in state: LuaState, request: RunRequest, emitted: Emitted) throws -> LuaValue {
        let token = request.token.token
        let emit = state.makeFunction { ctx in
            guard emitted.problem == nil else { throw LuaArgumentError(1, emitted.problem!) }
            let record: CBORValue
            do {
                record = try RecordConversion.cbor(try ctx.value(1))
            } catch let error as RecordConversion.Failure {
                // A bad record fails the run even if the program catches the error: effects are
                // all or nothing.
                emitted.problem = "emit: " + error.description
                throw LuaArgumentError(1, error.description)
            }
            let size = CBOREncoder.encode(record).count
            if emitted.records.count >= TokenLimits.maxEffectRecords || emitted.bytes + size > TokenLimits.maxEffectsBytes {
                emitted.problem = "emit: the effects exceed the limit of \(TokenLimits.maxEffectRecords) records or \(TokenLimits.maxEffectsBytes) bytes"
                throw LuaArgumentError(1, emitted.problem!)
            }
            emitted.records.append(record)
            emitted.bytes += size
            return 0
        }
        let transfer = state.makeFunction { ctx in
            guard let to = request.transferTo else {
                throw LuaArgumentError(1, "this run hands the token to nobody: t.transfer is for payments and deposits")
            }
            let given = try ctx.bytes(1)
            let key = given.count == 66 ? (try? Hex.decode(String(decoding: given, as: UTF8.self))) ?? given : given
            guard key == to.compressed else {
                throw LuaArgumentError(1, "this run hands the token to \(to), not to \(given.count == 33 || given.count == 66 ? Hex.encode(key) : "that value")")
            }
            guard !emitted.transferred else { throw LuaArgumentError(1, "the token was already handed on in this run") }
            emitted.transferred = true
            return 0
        }
        var fields = LuaTable([
            "id": .string(token.id),
            "issuer": .string(token.issuer.bytes),
            "value": token.value <= UInt64(Int64.max) ? .integer(Int64(token.value)) : .text(String(token.value)),
            "unit": .text(token.unit),
            "holder": .string(token.holder.compressed),
            "program_sha256": .string(token.programHash),
            "program_kind": .text(token.program.kind.rawValue),
        ])
        if let notBefore = token.notBefore { fields["not_before"] = .integer(notBefore) }
        if let expires = token.expires { fields["expires"] = .integer(expires) }
        if let meta = token.metadata { fields["meta"] = RecordConversion.lua(meta) }
        let results = try state.execute(
            internal: Capability.source, chunkName: "=capability",
            arguments: [
                .table(fields), RecordConversion.lua(request.arguments), .integer(request.now), emit,
                .table(PureFunctions.hashes(in: state)), .table(PureFunctions.verifiers(in: state)),
                .string(helperModules["hex"] ?? []), .string(helperModules["json"] ?? []),
                .string(request.chain.currentHolder.compressed), .integer(Int64(request.chain.transfers.count)),
                request.transferTo.map { .string($0.compressed) } ?? .nil, transfer,
            ]
        )
        guard let capability = results.first, case .reference = capability else {
            throw LuaError.setup("the capability object could not be built")
        }
        return capability
    }
}

extension SandboxLimits {
    /// The Lua sandbox's limits for a run's limits.
    init(_ limits: RunLimits) {
        self.init(memoryBytes: Int(clamping: limits.memoryBytes), instructions: limits.instructions, seconds: Double(limits.timeMillis) / 1000)
    }
}
