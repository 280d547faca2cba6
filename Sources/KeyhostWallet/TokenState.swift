/// Where a token is in its life: held, being run, or spent. Stored as the raw value.
public enum TokenState: String, Sendable, CaseIterable {
    /// In the wallet and runnable.
    case held = "HELD"
    /// Claimed by one run that has not committed or aborted yet.
    case pending = "PENDING"
    /// Run once, with its effects and receipt committed; never runs again.
    case spent = "SPENT"
}
