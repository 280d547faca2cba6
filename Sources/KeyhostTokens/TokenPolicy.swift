/// The limits an issuer sets for running its token's program; the wallet caps each by its own
/// maximum, so an issuer can ask for less than the wallet allows but never for more.
public struct TokenPolicy: Equatable, Sendable {
    /// Lua VM instructions.
    public var instructions: UInt64?
    /// Bytes the Lua state may allocate.
    public var memoryBytes: UInt64?
    /// Wall-clock milliseconds.
    public var timeMillis: UInt64?

    public init(instructions: UInt64? = nil, memoryBytes: UInt64? = nil, timeMillis: UInt64? = nil) {
        self.instructions = instructions
        self.memoryBytes = memoryBytes
        self.timeMillis = timeMillis
    }

    public var isEmpty: Bool { instructions == nil && memoryBytes == nil && timeMillis == nil }

    /// The least memory an issuer may set, in bytes: about four times what an empty program's run takes (its
    /// state, the capability and its helpers: between 192 and 256 KiB), and the CLI's floor of 1 MiB, so a
    /// limit below it is a unit mistake (`memory = 64` meaning MiB), never a token that can run.
    /// Tests/KeyhostPlayerTests/MinimumMemoryTests runs an empty program at it.
    public static let minimumMemoryBytes: UInt64 = 1 << 20

    /// `{"instructions": n, "memory": bytes, "time_ms": ms}`, absent entries left out.
    var cbor: CBORValue {
        var pairs: [CBORPair] = []
        if let instructions { pairs.append(CBORPair(.text("instructions"), .unsigned(instructions))) }
        if let memoryBytes { pairs.append(CBORPair(.text("memory"), .unsigned(memoryBytes))) }
        if let timeMillis { pairs.append(CBORPair(.text("time_ms"), .unsigned(timeMillis))) }
        return .map(pairs)
    }

    init(cbor value: CBORValue) throws {
        guard case .map(let pairs) = value, !pairs.isEmpty else {
            throw TokenError.field("limits", "must be a non-empty map of instructions, memory and time_ms")
        }
        func entry(_ name: String) throws -> UInt64? {
            guard let v = value[name] else { return nil }
            guard case .unsigned(let n) = v, n > 0 else { throw TokenError.field("limits", "'\(name)' must be a positive integer") }
            return n
        }
        for pair in pairs {
            guard case .text(let name) = pair.key, ["instructions", "memory", "time_ms"].contains(name) else {
                throw TokenError.field("limits", "unknown entry (known: instructions, memory, time_ms)")
            }
        }
        self.init(instructions: try entry("instructions"), memoryBytes: try entry("memory"), timeMillis: try entry("time_ms"))
    }
}
