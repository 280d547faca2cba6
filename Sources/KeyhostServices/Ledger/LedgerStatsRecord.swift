import KeyhostLedger
import KeyhostRecord

extension Record {
    /// A ledger's stats as both front ends give them (`keyhost token ledger stats --json`, Lua's `l:stats()`):
    /// the ledger service's own `GET /v1/stats` shape, so there is one shape wherever stats are read:
    /// `{tokens, double_spends, units = [{unit, tokens, total}]}`, units sorted, totals as decimal text.
    public init(ledgerStats stats: LedgerStats) { self = LedgerJSON.stats(stats) }
}
