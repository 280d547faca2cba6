import KeyhostBitcoin
import KeyhostCrypto
import KeyhostDiscovery
import KeyhostHTTP
import KeyhostRecord
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The options every wallet of a job takes unless its own line says otherwise.
public struct DiscoveryJobDefaults {
    public var coin: Coin?
    public var purpose: UInt32?
    public var kind: AddressKind?
    public var scheme: String?
    public var template: String?
    public var gapLimit = 20
    public var changeGapLimit: Int?
    public var accountGap = 1
    public var accounts: ClosedRange<UInt32>?
    public var indexes: ClosedRange<UInt32>?
    public var maxAddresses = DiscoveryOptions.defaultMaxAddresses

    public init() {}

    /// The defaults as text, part of each wallet's settings (a checkpoint entry made with others is not reused).
    var summary: String {
        [coin?.symbol, purpose.map(String.init), kind?.rawValue, scheme, template, String(gapLimit), changeGapLimit.map(String.init),
         String(accountGap), accounts.map { "\($0.lowerBound)-\($0.upperBound)" }, indexes.map { "\($0.lowerBound)-\($0.upperBound)" },
         String(maxAddresses)].map { $0 ?? "-" }.joined(separator: " ")
    }
}

/// A discovery job file (`keyhost discover --jobs FILE`, Lua's `discovery.scan_jobs`): JSON lines, one wallet per
/// line, blank lines and `#` comments allowed (docs/discovery-jobs.md):
///
///     {"id": "alice", "xpub": "zpub6r…"}
///     {"id": "vault", "descriptor": "wsh(sortedmulti(2,[…]xpub…/<0;1>/*,…))#checksum"}
///     {"id": "bob", "mnemonic_env": "BOB_WORDS", "purpose": 49, "gap_limit": 50}
///
/// A line that is not such an object (not JSON, an unknown key, a value of the wrong type, no key source or
/// two) stops the job before anything runs, naming the file and line. A key that turns out bad (an xpub that
/// does not decode, an unset variable) fails that wallet alone when its turn comes.
public enum DiscoveryJobFile {
    /// The largest job file read.
    public static let maximumSize = 64 * (1 << 20)

    static let keys = ["id", "xpub", "descriptor", "mnemonic_env", "passphrase_env", "coin", "purpose", "kind", "scheme", "template",
                       "gap_limit", "change_gap_limit", "account_gap", "accounts", "indexes", "max_addresses"]

    /// The wallets of the job file `bytes` (called `name` in errors). Each wallet's engine asks `usage` for the
    /// source of its coin (and its id), which the caller shares between wallets (`SharedUsageSources`).
    public static func wallets(_ bytes: [UInt8], name: String, defaults: DiscoveryJobDefaults,
                               variable: @escaping @Sendable (String) -> String? = { getenv($0).map { String(cString: $0) } },
                               usage: @escaping @Sendable (Coin, String) throws -> UsageSource) throws -> [JobWallet] {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DiscoverySetupError("job file \(name) is not UTF-8 text: one JSON object per line")
        }
        var wallets = [JobWallet]()
        var ids = [String: Int]()
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let number = offset + 1
            let wallet = try parse(line, where: "\(name):\(number)", defaults: defaults, variable: variable, usage: usage)
            if let first = ids[wallet.id] {
                throw DiscoverySetupError("\(name):\(number): the id \"\(wallet.id)\" is also on line \(first); give each wallet its own id")
            }
            ids[wallet.id] = number
            wallets.append(wallet)
        }
        guard !wallets.isEmpty else { throw DiscoverySetupError("job file \(name) lists no wallet: write one JSON object per line, e.g. {\"id\": \"a\", \"xpub\": \"zpub…\"}") }
        return wallets
    }

    private static func parse(_ line: String, where place: String, defaults: DiscoveryJobDefaults, variable: @escaping @Sendable (String) -> String?,
                              usage: @escaping @Sendable (Coin, String) throws -> UsageSource) throws -> JobWallet {
        func fail(_ problem: String) -> DiscoverySetupError { DiscoverySetupError("\(place): \(problem)") }
        guard let object = try? JSONValue.parse(Array(line.utf8)), let members = object.objectMembers, case .object = object else {
            throw fail("not a JSON object on one line (e.g. {\"id\": \"a\", \"xpub\": \"zpub…\"})")
        }
        var seen = Set<String>()
        for member in members {
            guard keys.contains(member.key) else {
                throw fail("unknown key \"\(String(member.key.prefix(40)))\"; the keys are \(keys.joined(separator: ", "))")
            }
            guard seen.insert(member.key).inserted else { throw fail("\"\(member.key)\" is given twice") }
        }
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value.stringValue else { throw fail("\"\(key)\" must be a string, not \(value.kindName)") }
            return text
        }
        func positive(_ key: String) throws -> Int? {
            guard let value = object[key] else { return nil }
            guard let number = value.integerValue, number >= 1 else { throw fail("\"\(key)\" must be a positive integer, not \(value.rendered.prefix(20))") }
            return number
        }
        func range(_ key: String) throws -> ClosedRange<UInt32>? {
            do { return try string(key).map { try DiscoverySetup.range($0, name: "\"\(key)\"") } } catch let error as DiscoverySetupError {
                throw fail(error.description)
            }
        }

        let xpub = try string("xpub")
        let mnemonicVariable = try string("mnemonic_env")
        let passphraseVariable = try string("passphrase_env")
        var descriptors: [String] = []
        if let value = object["descriptor"] {
            if let one = value.stringValue {
                descriptors = [one]
            } else if let list = value.arrayValue, (1...2).contains(list.count), list.allSatisfy({ $0.stringValue != nil }) {
                descriptors = list.compactMap(\.stringValue)
            } else {
                throw fail("\"descriptor\" must be a descriptor (a <0;1> multipath one) or a list of two (receive, change)")
            }
        }
        let sources = [xpub.map { _ in "xpub" }, mnemonicVariable.map { _ in "mnemonic_env" }, descriptors.isEmpty ? nil : "descriptor"].compactMap { $0 }
        guard sources.count == 1 else {
            throw fail(sources.isEmpty ? "no key source: give \"xpub\", \"descriptor\" or \"mnemonic_env\" (the name of a variable holding the phrase)"
                : "\(sources.map { "\"\($0)\"" }.joined(separator: " and ")) exclude each other; give one key source")
        }
        if passphraseVariable != nil && mnemonicVariable == nil { throw fail("\"passphrase_env\" goes with \"mnemonic_env\"") }
        if let xpub, HDNode.isExtendedPrivateKey(xpub) == true {
            throw fail("\"xpub\" holds an extended PRIVATE key; a job file must hold public keys only (or name a variable with mnemonic_env)")
        }

        var coin = defaults.coin
        if let name = try string("coin") {
            guard let named = Coin.named(name) ?? UInt32(name).flatMap(Coin.withSLIP44) else {
                throw fail("unknown coin \"\(name.prefix(20))\"; use one of \(Coin.all.map { $0.symbol.lowercased() }.joined(separator: ", "))")
            }
            coin = named
        }
        var kind = defaults.kind
        if let name = try string("kind") {
            guard let named = AddressKind(name: name) else {
                throw fail("unknown address kind \"\(name.prefix(20))\"; use one of \(AddressKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            kind = named
        }
        var purpose = defaults.purpose
        if let value = object["purpose"] {
            guard let number = value.integerValue, let exact = UInt32(exactly: number) else { throw fail("\"purpose\" must be 44, 49, 84 or 86") }
            purpose = exact
        }
        let scheme = try string("scheme") ?? defaults.scheme
        let template = try string("template") ?? defaults.template
        let gap = try positive("gap_limit") ?? defaults.gapLimit
        var options = DiscoveryOptions(receiveGapLimit: gap, changeGapLimit: try positive("change_gap_limit") ?? defaults.changeGapLimit ?? gap,
                                       accountGapLimit: try positive("account_gap") ?? defaults.accountGap,
                                       maxAddresses: try positive("max_addresses") ?? defaults.maxAddresses)
        if let accounts = try range("accounts") ?? defaults.accounts { options.accounts = accounts }
        if let indexes = try range("indexes") ?? defaults.indexes { options.indexes = indexes }
        if !descriptors.isEmpty, let extra = ["purpose", "kind", "scheme", "template", "accounts", "account_gap"].first(where: { object[$0] != nil }) {
            throw fail("\"\(extra)\" does not go with \"descriptor\": the descriptors say the scripts, and they are one wallet")
        }

        let id = try string("id") ?? String(place.split(separator: ":").last.map { "line \($0)" } ?? place)
        guard !id.isEmpty, id.utf8.count <= 200, !id.contains(where: { $0.isNewline }) else { throw fail("\"id\" must be 1 to 200 characters on one line") }
        let settings = line + " | " + defaults.summary
        let makeEngine = { @Sendable [descriptors, coin, kind, purpose, options] () throws -> DiscoveryEngine in
            if !descriptors.isEmpty {
                let network = coin.flatMap(BitcoinNetwork.init(coin:))
                if coin != nil && network == nil { throw DiscoverySetupError("descriptors are Bitcoin's; \"coin\" must be btc, test or regtest") }
                let wallet = try DescriptorWallet(try descriptors.map { try OutputDescriptor.parse($0.trimmingWhitespace()) }, network: network)
                return try DiscoveryEngine(descriptors: wallet, usage: try usage(wallet.scheme.coin, id), options: options)
            }
            let keys: AccountKeySource
            var family: ExtendedKeyVersion?
            if let xpub {
                let source = try ExtendedPublicKeySource(xpub)
                family = source.key.family
                keys = source
            } else {
                let variableName = mnemonicVariable!
                guard let phrase = variable(variableName), !phrase.isEmpty else {
                    throw DiscoverySetupError("the environment variable \(variableName) (the mnemonic) is not set or empty")
                }
                let mnemonic: Mnemonic
                do { mnemonic = try Mnemonic(phrase: phrase) } catch {
                    throw DiscoverySetupError("the mnemonic in \(variableName) is not a valid BIP39 phrase")
                }
                var passphrase = ""
                if let passphraseVariable {
                    guard let value = variable(passphraseVariable) else {
                        throw DiscoverySetupError("the environment variable \(passphraseVariable) (the BIP39 passphrase) is not set")
                    }
                    passphrase = value
                }
                keys = try SeedKeySource(mnemonic: mnemonic, passphrase: passphrase)
            }
            let chosen = try DiscoverySetup.scheme(.init(coin: coin, purpose: purpose, kind: kind, scheme: scheme, template: template, keyFamily: family))
            return DiscoveryEngine(scheme: chosen, keys: keys, usage: try usage(chosen.coin, id), options: options)
        }
        return JobWallet(id: id, settings: settings, makeEngine: makeEngine)
    }
}

/// One usage source per coin, made on first use and shared by every wallet of a job: one connection pool, one
/// rate limit. With `perWallet` (Tor stream isolation: a circuit per wallet) each wallet gets sources of its own,
/// made with the wallet's id, so that no connection carries two wallets' questions.
public final class SharedUsageSources: @unchecked Sendable {
    private let make: (Coin, String) throws -> UsageSource
    private let perWallet: Bool
    private let sources = Mutex<[String: UsageSource]>([:])

    public init(perWallet: Bool = false, make: @escaping (Coin, String) throws -> UsageSource) {
        self.perWallet = perWallet
        self.make = make
    }

    /// A job's sources, as both front ends make them: the usage source `spec` names for each coin;
    /// with `isolating` (a SOCKS proxy and `--proxy-isolate` / `proxy_isolate`) each wallet gets sources
    /// of its own under fresh credentials, a Tor circuit per wallet, so no exit sees two wallets'
    /// addresses (the rate limit stays one for the job). `wrap` lets the CLI add its Ctrl-C check.
    public convenience init(spec: String, http: HTTPOptions, isolating base: ProxySettings?, electrum: ElectrumOptions,
                            etherscanKeyVariable: String, chainID: Int? = nil,
                            wrap: @escaping (UsageSource) -> UsageSource = { $0 }) {
        self.init(perWallet: base != nil) { coin, _ in
            var http = http
            if let base { http.proxy = base.isolated(ProxySettings.freshIsolationKey()) }
            return wrap(try DiscoverySetup.usageSource(spec, coin: coin, http: http, electrum: electrum,
                                                        etherscanKeyVariable: etherscanKeyVariable, chainID: chainID))
        }
    }

    /// The source for `coin`, as wallet `id` uses it.
    public func source(for coin: Coin, wallet id: String) throws -> UsageSource {
        let key = perWallet ? coin.symbol + "\u{0}" + id : coin.symbol
        return try sources.withLock { sources in
            if let existing = sources[key] { return existing }
            let made = try make(coin, id)
            sources[key] = made
            return made
        }
    }
}
