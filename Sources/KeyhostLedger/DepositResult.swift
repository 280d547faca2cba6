import KeyhostCrypto

/// The ledger's answer for one deposited chain.
public enum DepositResult<Proof: Sendable>: Sendable {
    /// First deposit of this token: recorded.
    case accepted(tokenID: [UInt8])
    /// This very chain was deposited before: the same answer as then (retries are safe).
    case alreadyDeposited(tokenID: [UInt8])
    /// The token was deposited before with another chain: the proof names the key that signed twice.
    case doubleSpend(tokenID: [UInt8], proof: Proof)

    public var tokenID: [UInt8] {
        switch self {
        case .accepted(let id), .alreadyDeposited(let id), .doubleSpend(let id, _): return id
        }
    }

    /// `accepted`, `already_deposited` or `double_spend`, as the HTTP API and `--json` say it.
    public var name: String {
        switch self {
        case .accepted: return "accepted"
        case .alreadyDeposited: return "already_deposited"
        case .doubleSpend: return "double_spend"
        }
    }

    public var proof: Proof? {
        if case .doubleSpend(_, let proof) = self { return proof }
        return nil
    }
}
