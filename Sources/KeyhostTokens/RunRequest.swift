import KeyhostCrypto

/// What the wallet asks a player to do: run one token's program with arguments at a fixed time,
/// within limits. Sent to the worker process as deterministic CBOR.
public struct RunRequest: Equatable, Sendable {
    /// The token and the transfers it went through (what the program sees as its holder).
    public var chain: TokenChain
    public var token: SignedToken { chain.token }
    /// For a payment or deposit: the key the token must be handed to (`t.transfer`).
    public var transferTo: PublicKey?
    /// A map with text keys.
    public var arguments: CBORValue
    public var now: Int64
    public var limits: RunLimits
    /// The wallet trusts the issuer, so a bytecode program may be loaded.
    public var bytecodeAllowed: Bool

    public init(token: SignedToken, arguments: CBORValue, now: Int64, limits: RunLimits, bytecodeAllowed: Bool,
                transfers: [Transfer] = [], transferTo: PublicKey? = nil) {
        self.chain = TokenChain(token: token, transfers: transfers)
        self.transferTo = transferTo
        self.arguments = arguments
        self.now = now
        self.limits = limits
        self.bytecodeAllowed = bytecodeAllowed
    }

    public var encoded: [UInt8] {
        var pairs = [
            CBORPair(.text("chain"), .bytes(chain.encoded)),
            CBORPair(.text("args"), arguments),
            CBORPair(.text("now"), .int(now)),
            CBORPair(.text("instructions"), .unsigned(limits.instructions)),
            CBORPair(.text("memory"), .unsigned(limits.memoryBytes)),
            CBORPair(.text("time_ms"), .unsigned(limits.timeMillis)),
            CBORPair(.text("bytecode"), .bool(bytecodeAllowed)),
        ]
        if let transferTo { pairs.append(CBORPair(.text("transfer_to"), .bytes(transferTo.compressed))) }
        return CBOREncoder.encode(.map(pairs))
    }

    public init(encoded bytes: [UInt8]) throws {
        try self.init(cbor: try Self.decodeWorkerRequest(bytes))
    }

    /// A worker's request as CBOR, within the limits of a run request; a `RunRequest` or a `LinkRunsRequest`.
    public static func decodeWorkerRequest(_ bytes: [UInt8]) throws -> CBORValue {
        try CBORDecoder.decode(bytes, limits: .init(maxBytes: Self.maxEncodedBytes, maxDepth: TokenLimits.maxDepth + 2))
    }

    public init(cbor value: CBORValue) throws {
        guard case .bytes(let chainBytes)? = value["chain"], let arguments = value["args"], let now = value["now"]?.int64,
              case .unsigned(let instructions)? = value["instructions"], case .unsigned(let memory)? = value["memory"],
              case .unsigned(let time)? = value["time_ms"], case .bool(let bytecode)? = value["bytecode"]
        else { throw TokenError("encoding", "malformed run request") }
        var transferTo: PublicKey?
        if let to = value["transfer_to"] {
            guard case .bytes(let b) = to, let key = try? PublicKey(bytes: b) else { throw TokenError("encoding", "malformed run request") }
            transferTo = key
        }
        let chain = try TokenChain(encoded: chainBytes)
        self.init(
            token: chain.token, arguments: arguments, now: now,
            limits: RunLimits(instructions: instructions, memoryBytes: memory, timeMillis: time), bytecodeAllowed: bytecode,
            transfers: chain.transfers, transferTo: transferTo
        )
    }

    public static let maxEncodedBytes = TokenChain.maxEncodedBytes + TokenLimits.maxArgumentsBytes + 1024
}

/// The limits one run gets: the issuer's policy capped by the wallet's maximum.
public struct RunLimits: Equatable, Sendable {
    public var instructions: UInt64
    public var memoryBytes: UInt64
    public var timeMillis: UInt64

    public init(instructions: UInt64, memoryBytes: UInt64, timeMillis: UInt64) {
        self.instructions = instructions
        self.memoryBytes = memoryBytes
        self.timeMillis = timeMillis
    }

    /// A wallet's default maximum: 64 MiB, 100 million instructions, 5 seconds.
    public static let walletDefault = RunLimits(instructions: 100_000_000, memoryBytes: 64 << 20, timeMillis: 5_000)

    /// The issuer's limits where it set them, never more than `self`.
    public func capping(_ policy: TokenPolicy) -> RunLimits {
        RunLimits(
            instructions: min(policy.instructions ?? instructions, instructions),
            memoryBytes: min(policy.memoryBytes ?? memoryBytes, memoryBytes),
            timeMillis: min(policy.timeMillis ?? timeMillis, timeMillis)
        )
    }
}

/// How a run ended. A failed run has no effects and leaves the token HELD.
public enum RunOutcome: Equatable, Sendable {
    /// `transferred`: the program handed the token to the request's `transferTo`.
    case completed(effects: [CBORValue], transferred: Bool = false)
    /// `kind`: program, syntax, instruction_limit, memory_limit, time_limit, refused, effects, crashed.
    case failed(kind: String, message: String)

    public var encoded: [UInt8] {
        switch self {
        case .completed(let effects, let transferred):
            return CBOREncoder.encode(.map([
                CBORPair(.text("ok"), .bool(true)), CBORPair(.text("effects"), .array(effects)), CBORPair(.text("transferred"), .bool(transferred)),
            ]))
        case .failed(let kind, let message):
            return CBOREncoder.encode(.map([
                CBORPair(.text("ok"), .bool(false)), CBORPair(.text("kind"), .text(Self.capped(kind, at: 64))),
                CBORPair(.text("message"), .text(Self.capped(message, at: Self.maxMessageBytes))),
            ]))
        }
    }

    /// Whether the run failed for reasons of the machine that ran it rather than of the program and its
    /// inputs: the worker crashed or was killed, the wall clock ran out, the worker could not be set up or
    /// was interrupted. Every other failure (an error, a syntax error, an invalid record, the instruction or
    /// memory cap, which count the same on every machine) is what any run with those inputs gives.
    public var isMachineFailure: Bool {
        guard case .failed(let kind, _) = self else { return false }
        return Self.machineFailureKinds.contains(kind)
    }

    /// The failure kinds of the machine (`isMachineFailure`).
    public static let machineFailureKinds: Set<String> = ["crashed", "time_limit", "setup", "interrupted"]

    /// The most of a failure's message an answer carries. A program's error text is its own to make (a
    /// holder's arguments can make it megabytes long), and a worker's answer must always fit the pipe's
    /// reader's limit, so the text is cut here, where every answer is encoded, with a note of what was cut.
    public static let maxMessageBytes = 8 << 10

    /// The largest encoded answer: the most effects a run may emit, or the longest failure, with room for the map.
    public static let maxEncodedBytes = TokenLimits.maxEffectsBytes + (64 << 10)

    /// `text` cut to at most `limit` bytes of UTF-8 (at a character boundary), with a note of how much was left out.
    static func capped(_ text: String, at limit: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > limit else { return text }
        let note = " … (\(utf8.count) bytes, cut to the first \(limit))"
        var end = utf8.index(utf8.startIndex, offsetBy: max(0, limit - note.utf8.count))
        // Back to the start of a character, so the cut text is still valid UTF-8.
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(decoding: utf8[..<end], as: UTF8.self) + note
    }

    /// Reads a worker's answer strictly; anything else is a crashed run.
    public init(encoded bytes: [UInt8]) throws {
        let value = try CBORDecoder.decode(bytes, limits: .init(maxBytes: Self.maxEncodedBytes, maxDepth: TokenLimits.maxDepth + 2))
        switch value["ok"] {
        case .bool(true)?:
            guard case .array(let effects)? = value["effects"], effects.count <= TokenLimits.maxEffectRecords,
                  CBOREncoder.encode(.array(effects)).count <= TokenLimits.maxEffectsBytes
            else { throw TokenError("encoding", "malformed run result") }
            guard case .bool(let transferred)? = value["transferred"] else { throw TokenError("encoding", "malformed run result") }
            self = .completed(effects: effects, transferred: transferred)
        case .bool(false)?:
            guard case .text(let kind)? = value["kind"], case .text(let message)? = value["message"],
                  kind.utf8.count <= 64, message.utf8.count <= Self.maxMessageBytes
            else {
                throw TokenError("encoding", "malformed run result")
            }
            self = .failed(kind: kind, message: message)
        default:
            throw TokenError("encoding", "malformed run result")
        }
    }
}
