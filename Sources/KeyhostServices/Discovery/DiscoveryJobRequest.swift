import KeyhostCrypto
import KeyhostDiscovery
import KeyhostHTTP

/// A discovery job as both front ends ask for it (`keyhost discover --jobs FILE`, Lua's `discovery.scan_jobs`):
/// the values a user gave, checked and completed with the defaults here, once, so the two cannot drift. Each
/// front end only turns its own spelling (options, a Lua table) into these typed values; what is left out is
/// nil and takes the default below.
public struct DiscoveryJobRequest {
    /// The usage source all wallets share (`index:FILE`, `esplora:URL`, `electrum:…`, …; never `lua:`).
    public var source: String
    public var coin: Coin?
    public var purpose: UInt32?
    public var kind: AddressKind?
    public var scheme: String?
    public var template: String?
    public var gapLimit: Int?
    public var changeGapLimit: Int?
    public var accountGap: Int?
    public var accounts: ClosedRange<UInt32>?
    public var indexes: ClosedRange<UInt32>?
    public var maxAddresses: Int?
    public var walletsAtOnce: Int?
    public var checkpoint: String?
    public var http = HTTPOptions()
    /// The SOCKS proxy to isolate per wallet (`--proxy-isolate`): a Tor circuit each; nil shares connections.
    public var isolatingProxy: ProxySettings?
    public var electrum = ElectrumOptions(clientName: DiscoverySetup.electrumClientName)
    public var etherscanKeyVariable: String?
    public var chainID: Int?

    public static let defaultWalletsAtOnce = 4

    public init(source: String) { self.source = source }

    /// The job over the wallets of job-file text `lines` (called `name` in errors), ready to run. `spell` names an
    /// option the way the caller's user wrote it (`gap_limit` → `--gap-limit`, or `option 'gap_limit'`).
    /// Throws `DiscoverySetupError` for a bad option or line, before anything is asked of the source.
    public func job(lines: [UInt8], name: String, spell: (String) -> String) throws -> DiscoveryJob {
        if source.lowercased().hasPrefix("lua:") {
            throw DiscoverySetupError("\(spell("source")): a lua: source cannot serve a job's wallets at once; use index:, esplora:, electrum:, eth-rpc: or etherscan")
        }
        let sourceKind: String
        do { sourceKind = try DiscoverySetup.splitSource(source).kind } catch let error as DiscoverySetupError {
            throw DiscoverySetupError("\(spell("source")): \(error.description)")
        }
        try DiscoverySetup.checkElectrumPins(kind: sourceKind, electrum, spell: spell)
        func positive(_ value: Int?, _ key: String, default fallback: Int, what: String) throws -> Int {
            guard let value else { return fallback }
            guard value >= 1 else { throw DiscoverySetupError("\(spell(key)) must be at least 1, got \(value): it is \(what)") }
            return value
        }
        var defaults = DiscoveryJobDefaults()
        defaults.coin = coin
        defaults.purpose = purpose
        defaults.kind = kind
        defaults.scheme = scheme
        defaults.template = template
        defaults.gapLimit = try positive(gapLimit, "gap_limit", default: defaults.gapLimit,
                                         what: "how many consecutive unused addresses end a chain's scan (BIP44 uses 20)")
        if let changeGapLimit {
            defaults.changeGapLimit = try positive(changeGapLimit, "change_gap_limit", default: defaults.gapLimit,
                                                   what: "how many consecutive unused change addresses end the change chain's scan")
        }
        defaults.accountGap = try positive(accountGap, "account_gap", default: defaults.accountGap,
                                           what: "how many consecutive empty accounts end the scan (1 stops at the first)")
        defaults.accounts = accounts
        defaults.indexes = indexes
        defaults.maxAddresses = try positive(maxAddresses, "max_addresses", default: defaults.maxAddresses, what: "the most addresses one scan checks")
        let concurrency = try positive(walletsAtOnce, "wallets_at_once", default: Self.defaultWalletsAtOnce,
                                       what: "how many wallets are scanned at once")

        let sources = SharedUsageSources(spec: source, http: http, isolating: isolatingProxy, electrum: electrum,
                                         etherscanKeyVariable: etherscanKeyVariable ?? DiscoverySetup.defaultEtherscanKeyVariable,
                                         chainID: chainID)
        let wallets = try DiscoveryJobFile.wallets(lines, name: name, defaults: defaults, usage: sources.source(for:wallet:))
        let jobCheckpoint = try checkpoint.map { try JobCheckpoint(path: $0, source: source) }
        return try DiscoveryJob(wallets: wallets, concurrency: concurrency, checkpoint: jobCheckpoint)
    }
}
