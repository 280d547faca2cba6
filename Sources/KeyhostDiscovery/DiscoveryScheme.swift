import KeyhostCrypto

/// Where a wallet's addresses live: a path template plus the address kind and coin that turn keys into addresses.
///
/// The standard schemes are all templates too, so the engine has one code path: BIP44/49/84/86 are
/// `m/purpose'/coin'/{account}'/{change}/{index}`, Ethereum is `m/44'/60'/{account}'/0/{index}` (no change chain),
/// and Ledger Live's Ethereum layout is `m/44'/60'/{index}'/0/0`.
public struct DiscoveryScheme: Hashable, Sendable, CustomStringConvertible {
    /// Short name: "bip44", "bip49", "bip84", "bip86", "ethereum", "ethereum-per-index" or "custom".
    public let name: String
    /// The derivation template.
    public let template: PathTemplate
    /// How keys become addresses.
    public let kind: AddressKind
    /// The coin whose address parameters are used.
    public let coin: Coin

    /// A scheme from its parts; the coin must support the address kind.
    public init(name: String = "custom", template: PathTemplate, kind: AddressKind, coin: Coin) throws {
        guard coin.addressKinds.contains(kind) else {
            throw DiscoveryError.unsupportedScheme("\(coin.name) has no \(kind.rawValue) addresses; it has "
                + coin.addressKinds.map(\.rawValue).joined(separator: ", "))
        }
        self.name = name
        self.template = template
        self.kind = kind
        self.coin = coin
    }

    /// BIP44 (44, P2PKH), BIP49 (49, P2SH-P2WPKH), BIP84 (84, P2WPKH) or BIP86 (86, P2TR) for a Bitcoin-like coin,
    /// with its receive and change chains. On an Ethereum-like coin, purpose 44 gives the Ethereum scheme.
    public static func bip(purpose: UInt32, coin: Coin) throws -> DiscoveryScheme {
        if coin.addressKinds == [.ethereum] {
            guard purpose == 44 else { throw DiscoveryError.unsupportedScheme("\(coin.name) uses purpose 44 only, not \(purpose)") }
            return try ethereum(coin: coin)
        }
        let kinds: [UInt32: AddressKind] = [44: .p2pkh, 49: .p2shP2wpkh, 84: .p2wpkh, 86: .p2tr]
        guard let kind = kinds[purpose] else {
            throw DiscoveryError.unsupportedScheme("purpose \(purpose) is not one of 44, 49, 84, 86")
        }
        let template = try PathTemplate("m/\(purpose)'/\(coin.slip44)'/{account}'/{change}/{index}")
        return try DiscoveryScheme(name: "bip\(purpose)", template: template, kind: kind, coin: coin)
    }

    /// The BIP scheme for a SLIP-44 coin type that `Coin` knows.
    public static func bip(purpose: UInt32, slip44: UInt32) throws -> DiscoveryScheme {
        guard let coin = Coin.withSLIP44(slip44) else {
            throw DiscoveryError.unsupportedScheme("SLIP-44 coin type \(slip44) is not one keyhost knows ("
                + Coin.all.map { "\($0.slip44) \($0.symbol)" }.joined(separator: ", ") + ")")
        }
        return try bip(purpose: purpose, coin: coin)
    }

    /// The standard scheme of an address kind on a coin (the purpose that kind uses).
    public static func standard(_ kind: AddressKind, coin: Coin) throws -> DiscoveryScheme {
        kind == .ethereum ? try ethereum(coin: coin) : try bip(purpose: kind.purpose, coin: coin)
    }

    /// Ethereum as MetaMask and most wallets do it: m/44'/60'/{account}'/0/{index}, one chain, no change.
    public static func ethereum(coin: Coin = .ethereum) throws -> DiscoveryScheme {
        try DiscoveryScheme(name: "ethereum", template: PathTemplate("m/44'/\(coin.slip44)'/{account}'/0/{index}"),
                            kind: .ethereum, coin: coin)
    }

    /// Ethereum as Ledger Live does it: one account per address, m/44'/60'/{index}'/0/0. The index is hardened,
    /// so every index needs its own key export (there is no account xpub to derive from).
    public static func ethereumPerIndex(coin: Coin = .ethereum) throws -> DiscoveryScheme {
        try DiscoveryScheme(name: "ethereum-per-index", template: PathTemplate("m/44'/\(coin.slip44)'/{index}'/0/0"),
                            kind: .ethereum, coin: coin)
    }

    /// A custom template such as m/44'/60'/{account}'/0/{index}; `{change}` is optional.
    public static func custom(_ template: String, kind: AddressKind, coin: Coin) throws -> DiscoveryScheme {
        try DiscoveryScheme(name: "custom", template: PathTemplate(template), kind: kind, coin: coin)
    }

    /// e.g. "bip84 m/84'/0'/{account}'/{change}/{index} p2wpkh BTC".
    public var description: String { "\(name) \(template) \(kind.rawValue) \(coin.symbol)" }
}
