/// The limits an issuer sets for running its token's program; the wallet caps each by its own
/// maximum, so an issuer can ask for less than the wallet allows but never for more. Also, for
/// its ledger, how old a deposit link may be when it arrives (`maxDepositAge`).
public struct TokenPolicy: Equatable, Sendable {
    /// Lua VM instructions.
    public var instructions: UInt64?
    /// Bytes the Lua state may allocate.
    public var memoryBytes: UInt64?
    /// Wall-clock milliseconds.
    public var timeMillis: UInt64?
    /// Seconds after its time a deposit link is still taken by the issuer's ledger (none: any age).
    public var maxDepositAge: UInt64?

    public init(instructions: UInt64? = nil, memoryBytes: UInt64? = nil, timeMillis: UInt64? = nil, maxDepositAge: UInt64? = nil) {
        self.instructions = instructions
        self.memoryBytes = memoryBytes
        self.timeMillis = timeMillis
        self.maxDepositAge = maxDepositAge
    }

    public var isEmpty: Bool { instructions == nil && memoryBytes == nil && timeMillis == nil && maxDepositAge == nil }

    /// The most `maxDepositAge` may be: about 100 years, so that a time minus it never overflows.
    public static let maxDepositAgeLimit: UInt64 = 1 << 32

    /// The least memory an issuer may set, in bytes: about four times what an empty program's run takes (its
    /// state, the capability and its helpers: between 192 and 256 KiB), and the CLI's floor of 1 MiB, so a
    /// limit below it is a unit mistake (`memory = 64` meaning MiB), never a token that can run.
    /// Tests/KeyhostPlayerTests/MinimumMemoryTests runs an empty program at it.
    public static let minimumMemoryBytes: UInt64 = 1 << 20

    /// `{"instructions": n, "memory": bytes, "time_ms": ms, "max_deposit_age": s}`, absent entries left out.
    var cbor: CBORValue {
        var pairs: [CBORPair] = []
        if let instructions { pairs.append(CBORPair(.text("instructions"), .unsigned(instructions))) }
        if let memoryBytes { pairs.append(CBORPair(.text("memory"), .unsigned(memoryBytes))) }
        if let timeMillis { pairs.append(CBORPair(.text("time_ms"), .unsigned(timeMillis))) }
        if let maxDepositAge { pairs.append(CBORPair(.text("max_deposit_age"), .unsigned(maxDepositAge))) }
        return .map(pairs)
    }

    init(cbor value: CBORValue) throws {
        guard case .map(let pairs) = value, !pairs.isEmpty else {
            throw TokenError.field("limits", "must be a non-empty map of instructions, memory, time_ms and max_deposit_age")
        }
        func entry(_ name: String) throws -> UInt64? {
            guard let v = value[name] else { return nil }
            guard case .unsigned(let n) = v, n > 0 else { throw TokenError.field("limits", "'\(name)' must be a positive integer") }
            return n
        }
        for pair in pairs {
            guard case .text(let name) = pair.key, ["instructions", "memory", "time_ms", "max_deposit_age"].contains(name) else {
                throw TokenError.field("limits", "unknown entry (known: instructions, memory, time_ms, max_deposit_age)")
            }
        }
        let age = try entry("max_deposit_age")
        if let age, age > Self.maxDepositAgeLimit {
            throw TokenError.field("limits", "'max_deposit_age' of \(age) s is more than the limit of \(Self.maxDepositAgeLimit) s")
        }
        self.init(instructions: try entry("instructions"), memoryBytes: try entry("memory"), timeMillis: try entry("time_ms"), maxDepositAge: age)
    }
}
