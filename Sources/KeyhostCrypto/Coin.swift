/// A coin's SLIP-44 number and address parameters.
public struct Coin: Hashable, Sendable, CustomStringConvertible {
    /// Ticker-like identifier, unique in the registry (e.g. "BTC", "TEST" for Bitcoin testnet).
    public let symbol: String
    /// Human name, e.g. "Bitcoin".
    public let name: String
    /// SLIP-44 coin type (the unhardened value; paths use it hardened).
    public let slip44: UInt32
    /// Whether this is a test network.
    public let isTestnet: Bool
    /// Base58Check version byte of P2PKH addresses, if the coin has them.
    public let p2pkhVersion: UInt8?
    /// Base58Check version byte of P2SH addresses, if the coin has them.
    public let p2shVersion: UInt8?
    /// Bech32 human-readable part of segwit addresses, if the coin has segwit.
    public let bech32HRP: String?
    /// CashAddr prefix (Bitcoin Cash), if the coin's P2PKH addresses are written as CashAddr.
    public let cashAddrPrefix: String?
    /// WIF version byte of private keys, if the coin uses WIF.
    public let wifVersion: UInt8?
    /// Address kinds the coin supports, the first being its default.
    public let addressKinds: [AddressKind]
    /// Extended-key family used for each address kind.
    public let extendedKeyVersions: [AddressKind: ExtendedKeyVersion]

    /// The default address kind.
    public var defaultKind: AddressKind { addressKinds[0] }

    /// The extended-key family for `kind` (falling back to the coin's P2PKH family).
    public func extendedKeyVersion(for kind: AddressKind) -> ExtendedKeyVersion {
        extendedKeyVersions[kind] ?? extendedKeyVersions[.p2pkh] ?? (isTestnet ? .tpub : .xpub)
    }

    public var description: String { symbol }

    // MARK: - Registry

    private static let btcFamilies: [AddressKind: ExtendedKeyVersion] = [.p2pkh: .xpub, .p2shP2wpkh: .ypub, .p2wpkh: .zpub, .p2tr: .xpub]
    private static let testFamilies: [AddressKind: ExtendedKeyVersion] = [.p2pkh: .tpub, .p2shP2wpkh: .upub, .p2wpkh: .vpub, .p2tr: .tpub]

    public static let bitcoin = Coin(symbol: "BTC", name: "Bitcoin", slip44: 0, isTestnet: false, p2pkhVersion: 0x00, p2shVersion: 0x05,
                                     bech32HRP: "bc", cashAddrPrefix: nil, wifVersion: 0x80,
                                     addressKinds: [.p2wpkh, .p2tr, .p2shP2wpkh, .p2pkh], extendedKeyVersions: btcFamilies)
    public static let bitcoinTestnet = Coin(symbol: "TEST", name: "Bitcoin testnet", slip44: 1, isTestnet: true, p2pkhVersion: 0x6F,
                                            p2shVersion: 0xC4, bech32HRP: "tb", cashAddrPrefix: nil, wifVersion: 0xEF,
                                            addressKinds: [.p2wpkh, .p2tr, .p2shP2wpkh, .p2pkh], extendedKeyVersions: testFamilies)
    public static let bitcoinRegtest = Coin(symbol: "REGTEST", name: "Bitcoin regtest", slip44: 1, isTestnet: true, p2pkhVersion: 0x6F,
                                            p2shVersion: 0xC4, bech32HRP: "bcrt", cashAddrPrefix: nil, wifVersion: 0xEF,
                                            addressKinds: [.p2wpkh, .p2tr, .p2shP2wpkh, .p2pkh], extendedKeyVersions: testFamilies)
    public static let litecoin = Coin(symbol: "LTC", name: "Litecoin", slip44: 2, isTestnet: false, p2pkhVersion: 0x30, p2shVersion: 0x32,
                                      bech32HRP: "ltc", cashAddrPrefix: nil, wifVersion: 0xB0,
                                      addressKinds: [.p2wpkh, .p2shP2wpkh, .p2pkh],
                                      extendedKeyVersions: [.p2pkh: .xpub, .p2shP2wpkh: .ypub, .p2wpkh: .zpub])
    public static let litecoinTestnet = Coin(symbol: "TLTC", name: "Litecoin testnet", slip44: 1, isTestnet: true, p2pkhVersion: 0x6F,
                                             p2shVersion: 0x3A, bech32HRP: "tltc", cashAddrPrefix: nil, wifVersion: 0xEF,
                                             addressKinds: [.p2wpkh, .p2shP2wpkh, .p2pkh],
                                             extendedKeyVersions: [.p2pkh: .ttub, .p2shP2wpkh: .upub, .p2wpkh: .vpub])
    public static let dogecoin = Coin(symbol: "DOGE", name: "Dogecoin", slip44: 3, isTestnet: false, p2pkhVersion: 0x1E, p2shVersion: 0x16,
                                      bech32HRP: nil, cashAddrPrefix: nil, wifVersion: 0x9E,
                                      addressKinds: [.p2pkh], extendedKeyVersions: [.p2pkh: .dgub])
    public static let dash = Coin(symbol: "DASH", name: "Dash", slip44: 5, isTestnet: false, p2pkhVersion: 0x4C, p2shVersion: 0x10,
                                  bech32HRP: nil, cashAddrPrefix: nil, wifVersion: 0xCC,
                                  addressKinds: [.p2pkh], extendedKeyVersions: [.p2pkh: .xpub])
    public static let bitcoinCash = Coin(symbol: "BCH", name: "Bitcoin Cash", slip44: 145, isTestnet: false, p2pkhVersion: 0x00,
                                         p2shVersion: 0x05, bech32HRP: nil, cashAddrPrefix: "bitcoincash", wifVersion: 0x80,
                                         addressKinds: [.p2pkh], extendedKeyVersions: [.p2pkh: .xpub])
    public static let ethereum = Coin(symbol: "ETH", name: "Ethereum", slip44: 60, isTestnet: false, p2pkhVersion: nil, p2shVersion: nil,
                                      bech32HRP: nil, cashAddrPrefix: nil, wifVersion: nil,
                                      addressKinds: [.ethereum], extendedKeyVersions: [.ethereum: .xpub])
    public static let ethereumClassic = Coin(symbol: "ETC", name: "Ethereum Classic", slip44: 61, isTestnet: false, p2pkhVersion: nil,
                                             p2shVersion: nil, bech32HRP: nil, cashAddrPrefix: nil, wifVersion: nil,
                                             addressKinds: [.ethereum], extendedKeyVersions: [.ethereum: .xpub])

    /// Every coin in the registry.
    public static let all: [Coin] = [.bitcoin, .bitcoinTestnet, .bitcoinRegtest, .litecoin, .litecoinTestnet, .dogecoin, .dash,
                                     .bitcoinCash, .ethereum, .ethereumClassic]

    /// The coin with this symbol or name (case-insensitive), e.g. "btc", "Bitcoin", "eth", "testnet".
    public static func named(_ text: String) -> Coin? {
        let key = text.lowercased()
        let aliases = ["testnet": "TEST", "tbtc": "TEST", "regtest": "REGTEST", "ltc-testnet": "TLTC"]
        if let symbol = aliases[key] { return all.first { $0.symbol == symbol } }
        return all.first { $0.symbol.lowercased() == key || $0.name.lowercased() == key }
    }

    /// The first registry coin with SLIP-44 type `slip44` (mainnet preferred).
    public static func withSLIP44(_ slip44: UInt32) -> Coin? {
        all.first { $0.slip44 == slip44 }
    }
}
