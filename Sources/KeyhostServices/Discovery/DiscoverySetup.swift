// ProcessInfo from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCrypto
import KeyhostDiscovery

/// What `keyhost.discovery` and `keyhost discover` share: choosing the scheme from a few loose options,
/// and turning a usage source string (`index:FILE`, `esplora:URL`, …) into a source. Errors are
/// `DiscoverySetupError`s whose text names the option the way both layers spell it in their messages.
public enum DiscoverySetup {
    /// The Etherscan endpoint used when `etherscan` is given without a URL (the multichain v2 API).
    public static let defaultEtherscanURL = "https://api.etherscan.io/v2/api"
    /// The environment variable the Etherscan key is read from unless told otherwise.
    public static let defaultEtherscanKeyVariable = "ETHERSCAN_API_KEY"

    /// The loose scheme options a user gives.
    public struct SchemeRequest {
        public var coin: Coin?
        public var purpose: UInt32?
        public var kind: AddressKind?
        /// "bip44", "bip49", "bip84", "bip86", "ethereum", "ethereum_per_index" (or with a dash).
        public var scheme: String?
        public var template: String?
        /// The family of an xpub key source (zpub → BIP84 unless told otherwise).
        public var keyFamily: ExtendedKeyVersion?

        public init(coin: Coin? = nil, purpose: UInt32? = nil, kind: AddressKind? = nil, scheme: String? = nil,
                    template: String? = nil, keyFamily: ExtendedKeyVersion? = nil) {
            self.coin = coin
            self.purpose = purpose
            self.kind = kind
            self.scheme = scheme
            self.template = template
            self.keyFamily = keyFamily
        }
    }

    public static let schemeNames = ["bip44", "bip49", "bip84", "bip86", "ethereum", "ethereum_per_index"]

    /// The scheme the options describe. Conflicting options (a purpose and a template, a purpose and a kind that
    /// disagree) are refused rather than one silently winning.
    public static func scheme(_ request: SchemeRequest) throws -> DiscoveryScheme {
        let named = request.scheme.map { $0.lowercased().replacing("-", with: "_") }
        if let named, !schemeNames.contains(named) {
            throw DiscoverySetupError("unknown scheme \"\(request.scheme!)\"; use one of \(schemeNames.joined(separator: ", ")), "
                + "or a template with kind")
        }
        let given = [named.map { _ in "scheme" }, request.purpose.map { _ in "purpose" }, request.template.map { _ in "template" }]
            .compactMap { $0 }
        if given.count > 1 {
            throw DiscoverySetupError("\(given.joined(separator: " and ")) exclude each other: give one way to choose the scheme")
        }
        let ethereumNamed = named == "ethereum" || named == "ethereum_per_index"
        // A template names its coin in its coin-type step (m/44'/60'/…: Ethereum), as a reader of the path would take it.
        let coin = request.coin ?? request.template.flatMap(templateCoin) ?? request.keyFamily.map(coinOf)
            ?? ((request.kind == .ethereum || ethereumNamed) ? .ethereum : .bitcoin)
        let ethereumLike = coin.addressKinds == [.ethereum]

        if let template = request.template {
            return try DiscoveryScheme.custom(template, kind: request.kind ?? request.keyFamily.map { familyKind($0, coin) } ?? coin.defaultKind,
                                              coin: coin)
        }
        if let named {
            switch named {
            case "ethereum", "ethereum_per_index":
                guard ethereumLike else { throw DiscoverySetupError("scheme \(named) is for Ethereum-like coins, not \(coin.name)") }
                if let kind = request.kind, kind != .ethereum { throw DiscoverySetupError("scheme \(named) derives ethereum addresses, not \(kind.rawValue)") }
                return named == "ethereum" ? try .ethereum(coin: coin) : try .ethereumPerIndex(coin: coin)
            default:
                return try bip(purpose: UInt32(named.dropFirst(3))!, kind: request.kind, coin: coin)
            }
        }
        if let purpose = request.purpose { return try bip(purpose: purpose, kind: request.kind, coin: coin) }
        if let kind = request.kind { return try DiscoveryScheme.standard(kind, coin: coin) }
        if let family = request.keyFamily { return try DiscoveryScheme.standard(familyKind(family, coin), coin: coin) }
        return try DiscoveryScheme.standard(coin.defaultKind, coin: coin)
    }

    /// The coin of a template's second, hardened step (`m/44'/60'/{account}'/0/{index}` → Ethereum), if it names a known one.
    static func templateCoin(_ template: String) -> Coin? {
        let steps = template.split(separator: "/")
        guard steps.count > 2, steps[0] == "m", let mark = steps[2].last, mark == "'" || mark == "h" || mark == "H",
              let number = UInt32(steps[2].dropLast()) else { return nil }
        return Coin.withSLIP44(number)
    }

    private static func bip(purpose: UInt32, kind: AddressKind?, coin: Coin) throws -> DiscoveryScheme {
        let scheme = try DiscoveryScheme.bip(purpose: purpose, coin: coin)
        if let kind, kind != scheme.kind {
            throw DiscoverySetupError("purpose \(purpose) derives \(scheme.kind.rawValue) addresses, not \(kind.rawValue); drop one of them")
        }
        return scheme
    }

    /// What an xpub's family says about the address kind: ypub/zpub name theirs; a plain xpub is BIP44 (P2PKH),
    /// or Ethereum on an Ethereum-like coin.
    private static func familyKind(_ family: ExtendedKeyVersion, _ coin: Coin) -> AddressKind {
        if family.kind == .p2pkh && !coin.addressKinds.contains(.p2pkh) { return coin.defaultKind }
        return family.kind
    }

    /// The coin an extended key's version bytes point to.
    private static func coinOf(_ family: ExtendedKeyVersion) -> Coin {
        switch family.publicPrefix {
        case "Ltub": return .litecoin
        case "ttub": return .litecoinTestnet
        case "dgub": return .dogecoin
        default: return family.isTestnet ? .bitcoinTestnet : .bitcoin
        }
    }

    /// A server certificate or fingerprint pinned for a source that is not Electrum is a mistake, not a no-op.
    /// `spell` names an option as the caller's user wrote it (`electrum_cert` → `--electrum-cert`, `option 'electrum_cert'`).
    public static func checkElectrumPins(kind: String, _ electrum: ElectrumOptions, spell: (String) -> String) throws {
        guard kind != "electrum" else { return }
        if let pin = electrum.certificateFile.map({ _ in spell("electrum_cert") }) ?? electrum.fingerprint.map({ _ in spell("electrum_fingerprint") }) {
            throw DiscoverySetupError("\(pin) goes with an Electrum source, electrum:ssl://HOST:PORT, not \(kind)")
        }
    }

    /// The usage source a string names: `index:FILE`, `esplora:URL`, `electrum:tcp://HOST:PORT`,
    /// `electrum:ssl://HOST:PORT`, `eth-rpc:URL`, `etherscan` or `etherscan:URL`.
    public static func usageSource(_ spec: String, coin: Coin, http: HTTPOptions = HTTPOptions(),
                                   electrum: ElectrumOptions = ElectrumOptions(clientName: electrumClientName),
                                   etherscanKeyVariable: String = defaultEtherscanKeyVariable, chainID: Int? = nil,
                                   environment: [String: String] = ProcessInfo.processInfo.environment,
                                   spell: (String) -> String = { $0 }) throws -> UsageSource {
        let (kind, rest) = try splitSource(spec)
        try checkElectrumPins(kind: kind, electrum, spell: spell)
        switch kind {
        case "index":
            return try IndexFileUsageSource(path: rest!, coin: coin)
        case "esplora":
            return try EsploraUsageSource(baseURL: rest!, http: http)
        case "electrum":
            return try ElectrumUsageSource(server: rest!, coin: coin, http: http, electrum: electrum)
        case "eth-rpc":
            return try EthereumRPCUsageSource(url: rest!, http: http)
        default:  // etherscan
            let chain = chainID ?? (rest == nil && coin == .ethereum ? 1 : nil)
            return try EtherscanUsageSource(baseURL: rest ?? defaultEtherscanURL, apiKeyVariable: etherscanKeyVariable, chainID: chain,
                                            environment: environment, http: http)
        }
    }

    /// An account or index range, `A-B` or `A`, with numbers 0...2147483647; `name` names the option in errors.
    public static func range(_ text: String, name: String) throws -> ClosedRange<UInt32> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
        let numbers = parts.map { UInt32($0) }
        guard (1...2).contains(parts.count), numbers.allSatisfy({ $0 != nil && $0! <= DerivationLimit.maxIndex }) else {
            throw DiscoverySetupError("\(name) takes A-B or A with numbers 0...2147483647, got \"\(text.prefix(40))\"")
        }
        let (from, to) = (numbers[0]!, numbers.last!!)
        guard from <= to else { throw DiscoverySetupError("\(name) \(text): the first number must not be above the second") }
        return from...to
    }

    public static let sourceForms = "index:FILE, esplora:URL, electrum:tcp://HOST:PORT, electrum:ssl://HOST:PORT, eth-rpc:URL, etherscan or etherscan:URL"

    /// The client name the Electrum source sends in `server.version`.
    public static let electrumClientName = "keyhost \(KeyhostVersion.text)"

    /// Checks a source string's shape without opening anything: the kind and, where required, the part after ':'.
    public static func splitSource(_ spec: String) throws -> (kind: String, rest: String?) {
        let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let kind = parts[0].lowercased()
        let rest = parts.count > 1 ? parts[1] : nil
        let aliases = ["index": "index", "esplora": "esplora", "electrum": "electrum", "eth-rpc": "eth-rpc", "eth_rpc": "eth-rpc", "ethereum-rpc": "eth-rpc",
                       "rpc": "eth-rpc", "etherscan": "etherscan"]
        guard let canonical = aliases[kind], !(kind == "http" || kind == "https") else {
            let hint = kind.hasPrefix("http") ? " (a URL needs its kind in front, e.g. esplora:\(spec))" : ""
            throw DiscoverySetupError("unknown usage source \"\(spec)\"\(hint); use \(sourceForms)")
        }
        if canonical != "etherscan", rest?.isEmpty ?? true {
            let what = canonical == "index" ? "a file" : canonical == "electrum" ? "a server" : "a URL"
            let example = ["index": "index:used.txt", "esplora": "esplora:https://blockstream.info/api",
                           "electrum": "electrum:ssl://electrum.example.org:50002"][canonical] ?? "eth-rpc:http://127.0.0.1:8545"
            throw DiscoverySetupError("usage source \"\(spec)\" needs \(what) after the colon, e.g. \(example)")
        }
        if canonical == "electrum", let rest {
            do { _ = try ElectrumServer(rest) } catch { throw DiscoverySetupError("usage source \"\(spec)\": \(error)") }
        }
        if canonical == "etherscan", let rest, rest.isEmpty {
            return (canonical, nil)
        }
        return (canonical, rest)
    }
}

/// A discovery option that cannot work; the text says which and why.
public struct DiscoverySetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
