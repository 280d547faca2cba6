/// The knobs of a discovery job. The defaults are BIP44's: a gap of 20 on both chains, stop at the first empty
/// account. Recovery jobs raise the limits (wallets that handed out addresses without using them, imported
/// keys, exchanges with big gaps); limits of many thousands are fine.
public struct DiscoveryOptions: Equatable, Sendable {
    /// Consecutive unused receive (external, chain 0) addresses that end an account's receive scan.
    public var receiveGapLimit: Int = 20
    /// Consecutive unused change (internal, chain 1) addresses that end an account's change scan.
    public var changeGapLimit: Int = 20
    /// Consecutive empty accounts that end the scan; 1 stops at the first empty account, as BIP44 says.
    public var accountGapLimit: Int = 1
    /// Accounts to consider (the scan stops earlier at the account gap).
    public var accounts: ClosedRange<UInt32> = 0...(DerivationLimit.maxIndex)
    /// Address indexes to consider on each chain (the scan stops earlier at the gap).
    public var indexes: ClosedRange<UInt32> = 0...(DerivationLimit.maxIndex)
    /// Most addresses asked of the usage source in one call.
    public var batchSize: Int = 100
    /// Least seconds between two checkpoint writes (the checkpoint is also written when the job ends or fails).
    public var checkpointInterval: Double = 1
    /// Most addresses one scan checks, over all chains and accounts. A source that reports every address as used
    /// never closes a gap; this cap ends such a scan with an error instead of running for hours and gigabytes.
    public var maxAddresses: Int = DiscoveryOptions.defaultMaxAddresses

    /// The default of `maxAddresses`: a million addresses, far beyond any real wallet (an hour or so against a fast source).
    public static let defaultMaxAddresses = 1_000_000

    public init(receiveGapLimit: Int = 20, changeGapLimit: Int = 20, accountGapLimit: Int = 1,
                accounts: ClosedRange<UInt32> = 0...DerivationLimit.maxIndex, indexes: ClosedRange<UInt32> = 0...DerivationLimit.maxIndex,
                batchSize: Int = 100, checkpointInterval: Double = 1, maxAddresses: Int = DiscoveryOptions.defaultMaxAddresses) {
        self.receiveGapLimit = receiveGapLimit
        self.changeGapLimit = changeGapLimit
        self.accountGapLimit = accountGapLimit
        self.accounts = accounts
        self.indexes = indexes
        self.batchSize = batchSize
        self.checkpointInterval = checkpointInterval
        self.maxAddresses = maxAddresses
    }

    /// Throws the first option that cannot work.
    public func validate() throws {
        guard receiveGapLimit >= 1 else { throw DiscoveryError.invalidGapLimit(chain: "receive", value: receiveGapLimit) }
        guard changeGapLimit >= 1 else { throw DiscoveryError.invalidGapLimit(chain: "change", value: changeGapLimit) }
        guard accountGapLimit >= 1 else { throw DiscoveryError.invalidGapLimit(chain: "account", value: accountGapLimit) }
        guard accounts.upperBound <= DerivationLimit.maxIndex else {
            throw DiscoveryError.invalidRange(what: "account", detail: "\(accounts.upperBound) is above 2147483647, the largest BIP32 index")
        }
        guard indexes.upperBound <= DerivationLimit.maxIndex else {
            throw DiscoveryError.invalidRange(what: "index", detail: "\(indexes.upperBound) is above 2147483647, the largest BIP32 index")
        }
        guard batchSize >= 1 else { throw DiscoveryError.invalidOption(name: "batch size", detail: "\(batchSize); it must be at least 1") }
        guard maxAddresses >= 1 else {
            throw DiscoveryError.invalidOption(name: "address cap", detail: "\(maxAddresses); it must be at least 1")
        }
        guard checkpointInterval >= 0 else {
            throw DiscoveryError.invalidOption(name: "checkpoint interval", detail: "\(checkpointInterval); it must not be negative")
        }
    }
}

/// BIP32 index limits.
public enum DerivationLimit {
    /// The largest non-hardened index (and the largest account number once hardened).
    public static let maxIndex: UInt32 = 0x7FFF_FFFF
}
