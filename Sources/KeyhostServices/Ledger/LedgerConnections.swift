import KeyhostCrypto
import KeyhostHTTP
import KeyhostLedger

/// Every kind of ledger both front ends open by one text: `sqlite:FILE` and `postgres://…` on the
/// database (`TokenLedgers`), `http://HOST:PORT` through its service.
public enum LedgerConnections {
    /// Opens the ledger at `text`. `issuers` (the keys a database ledger serves) and `worker` (the
    /// keyhost that re-runs programs) are not used for a service, which has its own; `proxies` only for
    /// a service (a database connection never goes through a proxy).
    public static func open(_ text: String, issuers: [XOnlyPublicKey], worker: String,
                            proxies: ProxySettings = .direct) throws -> any TokenLedgerConnection {
        if isService(text) { return try HTTPTokenLedger(text, proxies: proxies) }
        return try TokenLedgers.open(text, issuers: issuers, worker: worker)
    }

    /// Whether `text` names a ledger service rather than a database.
    public static func isService(_ text: String) -> Bool { text.hasPrefix("http://") || text.hasPrefix("https://") }
}
