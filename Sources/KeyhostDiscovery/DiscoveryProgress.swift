/// A snapshot of a running job, given to the progress callback after every batch, so the CLI can show a
/// status line and a long recovery job is visibly alive.
public struct DiscoveryProgress: Sendable {
    /// Accounts whose scan is finished.
    public var accountsDone: Int
    /// The account being scanned (nil for schemes without {account}).
    public var currentAccount: UInt32?
    /// Addresses whose usage is known so far (queried or from the checkpoint).
    public var addressesChecked: Int
    /// Of those, how many were asked of the usage source in this run.
    public var addressesQueried: Int
    /// Used addresses found so far.
    public var usedFound: Int
    /// Seconds since the job started.
    public var elapsed: Double
    /// Addresses checked per second so far.
    public var rate: Double { elapsed > 0 ? Double(addressesChecked) / elapsed : 0 }
}
