/// What a discovery job found: per account its key, its used addresses and how far each chain was scanned.
/// A value type with stable JSON field names, because the CLI prints it and scripts read it.
public struct DiscoveryResult: Codable, Equatable, Sendable {
    /// Scheme name, e.g. "bip84".
    public var scheme: String
    /// The path template scanned, e.g. m/84'/0'/{account}'/{change}/{index}.
    public var template: String
    /// Coin symbol, e.g. "BTC".
    public var coin: String
    /// Address kind, e.g. "p2wpkh".
    public var addressKind: String
    /// The key source's label (never secret).
    public var keySource: String
    /// The usage source's name.
    public var usageSource: String
    public var receiveGapLimit: Int
    public var changeGapLimit: Int
    public var accountGapLimit: Int
    /// Every account scanned, used or empty, in scan order.
    public var accounts: [AccountReport]
    public var totals: Totals
    /// Things a reader must know to trust the result (one account only, a range cut the scan short, ...).
    public var notes: [String]

    /// Accounts with at least one used address.
    public var usedAccounts: [AccountReport] { accounts.filter(\.isUsed) }
    /// All used addresses of all accounts.
    public var usedAddresses: [UsedAddress] { accounts.flatMap(\.usedAddresses) }
}

/// One account's scan.
public struct AccountReport: Codable, Equatable, Sendable {
    /// The account number, or nil when the scheme has no {account} (e.g. Ledger Live's per-index Ethereum).
    public var account: UInt32?
    /// The account key's path, e.g. m/84'/0'/0' (with {index} left in for per-index schemes).
    public var keyPath: String
    /// The account's extended public key in its coin's family (zpub for BIP84 ...), nil for per-index schemes.
    public var extendedPublicKey: String?
    /// Used addresses, receive chain first, by index.
    public var usedAddresses: [UsedAddress]
    /// Highest used index on the receive chain.
    public var lastUsedReceiveIndex: UInt32?
    /// Highest used index on the change chain (nil also when the scheme has no change chain).
    public var lastUsedChangeIndex: UInt32?
    /// Receive addresses checked.
    public var receiveAddressesChecked: Int
    /// Change addresses checked.
    public var changeAddressesChecked: Int
    /// False when the index range ran out before a gap was reached: more used addresses may lie beyond.
    public var gapReached: Bool
    /// Whether any address of the account is used.
    public var isUsed: Bool
    /// The account's output descriptors with checksums (receive, then change), ready for Bitcoin Core's
    /// importdescriptors, Sparrow or BDK; nil where descriptors cannot describe it (Ethereum, per-index schemes).
    public var descriptors: [String]? = nil
}

/// A used address and where it is.
public struct UsedAddress: Codable, Equatable, Hashable, Sendable {
    public var address: String
    /// 0 receive (external), 1 change (internal).
    public var chain: UInt32
    public var index: UInt32
    /// Full derivation path, e.g. m/84'/0'/0'/1/7.
    public var path: String
    public init(address: String, chain: UInt32, index: UInt32, path: String) {
        self.address = address
        self.chain = chain
        self.index = index
        self.path = path
    }
}

/// Totals over the job.
public struct Totals: Codable, Equatable, Sendable {
    public var accountsScanned: Int
    public var accountsUsed: Int
    public var addressesChecked: Int
    public var usedAddresses: Int
    /// Addresses asked of the usage source in this run.
    public var addressesQueried: Int
    /// Addresses whose usage came from the checkpoint instead.
    public var addressesFromCheckpoint: Int
}
