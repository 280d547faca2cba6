/// A chain to look up in a store: the token it carries and the hash of its encoding.
public struct ChainKey: Sendable, Hashable {
    public let tokenID: [UInt8]
    public let chainHash: [UInt8]

    public init(tokenID: [UInt8], chainHash: [UInt8]) {
        self.tokenID = tokenID
        self.chainHash = chainHash
    }
}

/// What a store has recorded of one chain (`LedgerStore.recorded`). Only chains that passed every
/// rule are recorded, and a chain hash commits to the whole chain, so a recorded chain needs no
/// second verification.
public enum RecordedChain: Sendable, Equatable {
    /// The chain is its token's deposit.
    case deposited
    /// The chain is recorded as a double spend of its token, whose deposit is `deposit` (its encoding).
    case doubleSpend(deposit: [UInt8])
}
