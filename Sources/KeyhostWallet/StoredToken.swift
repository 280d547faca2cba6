import KeyhostTokens

/// A token as the wallet holds it: the signed token and where it is in its life.
public struct StoredToken: Equatable, Sendable {
    /// The token exactly as imported (its signature is checked by whoever imports or runs it).
    public let token: SignedToken
    /// HELD, PENDING or SPENT.
    public let state: TokenState
    /// Unix seconds when it was imported.
    public let importedAt: Int64
    /// Unix seconds when its run committed; nil unless SPENT.
    public let spentAt: Int64?
    /// The receipt of the run that spent it; nil unless SPENT.
    public let receiptID: [UInt8]?
    /// The process running it; nil unless PENDING.
    public let pendingOwner: RunOwner?

    /// The transfers that brought it here (empty for a token issued to this wallet).
    public var transfers: [Transfer] = []

    /// The token's 32-byte id.
    public var id: [UInt8] { token.token.id }
    /// The token with its transfers.
    public var chain: TokenChain { TokenChain(token: token, transfers: transfers) }
}

/// What `importToken` did.
public enum ImportOutcome: Equatable, Sendable {
    /// The token is new and now HELD.
    case added
    /// The identical token was already in the wallet, in this state; nothing changed.
    case alreadyPresent(TokenState)
}
