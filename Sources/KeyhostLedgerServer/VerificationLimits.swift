/// How much verification one request, and one client address, may ask of the service
/// (`--max-links-per-request`, `--links-per-second-per-client`; docs/ledger.md). Work is counted in
/// links of chains the ledger has not recorded: each is a signature check and a re-run of the
/// token's program in a worker, the service's costly part. Chains recorded before cost nothing.
public struct VerificationLimits: Sendable, Equatable {
    /// Links one request may ask to verify; more is answered 413 `too_much_work` before any is.
    public var linksPerRequest: Int
    /// Links one client address (an IPv6 /64) may have verified per second, on average. Its
    /// allowance holds up to `linksPerRequest`, so an idle client can always send one full request;
    /// a request the allowance does not cover is answered 429 `rate_limited` with Retry-After.
    public var linksPerSecondPerClient: Int

    /// 1024 links: 16 chains of 64 links, or 1,000 chains of one (a full batch of direct
    /// deposits). A re-run of a 64-link cash chain's link took about 5 ms of CPU, so a request
    /// costs at most a few CPU-seconds, where 160 such chains (what 4 MiB holds) cost 47.
    public static let defaultLinksPerRequest = 1024
    /// 64 links a second: about a third of a core's worth of the longest chains per client
    /// address, 64 direct deposits a second.
    public static let defaultLinksPerSecondPerClient = 64

    public init(linksPerRequest: Int = defaultLinksPerRequest, linksPerSecondPerClient: Int = defaultLinksPerSecondPerClient) {
        self.linksPerRequest = linksPerRequest
        self.linksPerSecondPerClient = linksPerSecondPerClient
    }

    /// The limits the options give, or an error naming the option and what it takes.
    public static func resolve(linksPerRequest: Int, linksPerSecondPerClient: Int) throws -> VerificationLimits {
        guard linksPerRequest >= 64 else {
            throw LimitError("--max-links-per-request must be at least 64 (one chain of the longest, 64 links, must fit), got \(linksPerRequest)")
        }
        guard linksPerSecondPerClient >= 1 else {
            throw LimitError("--links-per-second-per-client must be at least 1, got \(linksPerSecondPerClient)")
        }
        return VerificationLimits(linksPerRequest: linksPerRequest, linksPerSecondPerClient: linksPerSecondPerClient)
    }
}
