import KeyhostCrypto

/// The Bitcoin networks descriptors derive addresses for.
public enum BitcoinNetwork: String, CaseIterable, Sendable {
    case mainnet, testnet, signet, regtest

    /// The coin whose address parameters the network uses (signet shares testnet's).
    public var coin: Coin {
        switch self {
        case .mainnet: return .bitcoin
        case .testnet, .signet: return .bitcoinTestnet
        case .regtest: return .bitcoinRegtest
        }
    }

    /// Whether extended keys for this network are tpub (all but mainnet).
    public var isTestnet: Bool { self != .mainnet }

    /// "mainnet" (also "bitcoin", "main", "btc"), "testnet" ("test", "testnet3", "testnet4", "tbtc"), "signet", "regtest".
    public init?(name: String) {
        switch name.lowercased() {
        case "mainnet", "main", "bitcoin", "btc": self = .mainnet
        case "testnet", "test", "testnet3", "testnet4", "tbtc": self = .testnet
        case "signet": self = .signet
        case "regtest": self = .regtest
        default: return nil
        }
    }

    /// The network of a registry coin, when it is a Bitcoin network.
    public init?(coin: Coin) {
        switch coin.symbol {
        case Coin.bitcoin.symbol: self = .mainnet
        case Coin.bitcoinTestnet.symbol: self = .testnet
        case Coin.bitcoinRegtest.symbol: self = .regtest
        default: return nil
        }
    }

    /// The names `init(name:)` takes, for messages.
    public static let names = "mainnet, testnet, signet, regtest"
}
