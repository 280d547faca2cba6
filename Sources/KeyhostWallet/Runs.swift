import KeyhostTokens

/// A token claimed for one run: what `commitRun` and `abortRun` need to finish exactly that run.
public struct PendingRun: Equatable, Sendable {
    /// The token being run.
    public let tokenID: [UInt8]
    /// 16 random bytes naming this run, so a stale or foreign run can never commit or abort it.
    public let runID: [UInt8]
    /// The process that runs it.
    public let owner: RunOwner

    /// A run as recorded (the worker process rebuilds it from what the player hands over).
    public init(tokenID: [UInt8], runID: [UInt8], owner: RunOwner) {
        self.tokenID = tokenID
        self.runID = runID
        self.owner = owner
    }
}

/// A PENDING run whose process was gone, put back to HELD by `reconcile()`.
public struct ReconciledRun: Equatable, Sendable {
    /// The token that is HELD again.
    public let tokenID: [UInt8]
    /// The dead process that had claimed it.
    public let owner: RunOwner
    /// Unix seconds when that run began.
    public let startedAt: Int64
}

/// A run ready to commit: what `TokenStore.commitRun` records (see there).
public struct SpentRun: Sendable {
    public let run: PendingRun
    public let effects: [UInt8]
    public let receipt: [UInt8]
    public let receiptID: [UInt8]
    public let spentAt: Int64
    public let outgoing: (requestID: [UInt8], chain: TokenChain)?
    public let paymentAmount: UInt64?

    public init(run: PendingRun, effects: [UInt8], receipt: [UInt8], receiptID: [UInt8], spentAt: Int64,
                outgoing: (requestID: [UInt8], chain: TokenChain)? = nil, paymentAmount: UInt64? = nil) {
        self.run = run
        self.effects = effects
        self.receipt = receipt
        self.receiptID = receiptID
        self.spentAt = spentAt
        self.outgoing = outgoing
        self.paymentAmount = paymentAmount
    }
}
