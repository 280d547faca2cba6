/// Where a ledger keeps its deposits: SQLite for one machine, PostgreSQL for several servers.
///
/// A store never decides uniqueness by reading first: each deposit is an
/// `INSERT … ON CONFLICT DO NOTHING` on the token id's primary key, then a read of the row that
/// won, all in one transaction per batch. So of any number of processes and servers depositing the
/// same token at once, the database lets exactly one insert it, and the others read its chain.
public protocol LedgerStore: Sendable {
    /// Records `deposits` in one transaction and answers for each, in order. `conflict` is called,
    /// inside the transaction, for a deposit whose token id is recorded with another chain (passed
    /// as its encoding); what it returns is recorded as a double spend. If `conflict` or the
    /// database throws, nothing of the batch is recorded. (`conflict` may be called from another
    /// task: the PostgreSQL store runs the batch under a deadline.)
    func record<Proof: Sendable>(
        _ deposits: [DepositRecord],
        conflict: @escaping @Sendable (DepositRecord, _ recordedChain: [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> [StoreOutcome<Proof>]

    /// What is recorded of each chain of `chains`, in order: nil for a chain not recorded (its token
    /// is not, or is recorded with another chain and this one is no recorded double spend). Read
    /// outside any batch: deposits are never removed, so what it finds stays true.
    func recorded(_ chains: [ChainKey]) async throws -> [RecordedChain?]

    /// Counts and totals of what is recorded.
    func stats() async throws -> LedgerStats

    /// Where the store is, for messages (never with a password).
    var displayName: String { get }

    /// Releases connections; the store is unusable afterwards.
    func close() async
}

/// What a ledger has recorded.
public struct LedgerStats: Sendable, Equatable {
    /// Tokens deposited (each token id once).
    public var tokens: Int
    /// Total value deposited per unit, as decimal text (a sum of 64-bit values can exceed 64 bits).
    public var totals: [String: String]
    /// Tokens deposited per unit.
    public var tokensByUnit: [String: Int]
    /// Distinct double-spend attempts recorded (each conflicting chain once).
    public var doubleSpends: Int

    public init(tokens: Int, totals: [String: String], tokensByUnit: [String: Int], doubleSpends: Int) {
        self.tokens = tokens
        self.totals = totals
        self.tokensByUnit = tokensByUnit
        self.doubleSpends = doubleSpends
    }
}
