import ArgumentParser
import KeyhostHTTP
// ProcessInfo from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostServices
import KeyhostCrypto
import KeyhostDiscovery
import KeyhostRecord

#if canImport(Glibc)
import Glibc
#endif

/// `keyhost discover`: gap-limit account discovery from an xpub, a mnemonic (from the environment) or a card,
/// against an index file, an HTTP service or a Lua function.
struct Discover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Find a wallet's used accounts and addresses (BIP44 gap limits).",
        discussion: """
            Keys: --xpub KEY (one account), a mnemonic as every command takes one (KEYHOST_MNEMONIC or the variable \
            --mnemonic-env names, else a prompt on a terminal; never from the command line; with the passphrase of \
            KEYHOST_PASSPHRASE when set, --passphrase-env VAR, --passphrase-prompt or --no-passphrase), --descriptor D, \
            or --card [READER] (one EXPORT KEY per account; \
            PIN and pairing password from KEYHOST_PIN / KEYHOST_PAIRING_PASSWORD or a prompt; --card virtual \
            --card-state FILE for a software card set up with keyhost.card).
            Usage sources: index:FILE (one address per line, CSV with an address column, or a JSON list), esplora:URL, \
            electrum:tcp://HOST:PORT or electrum:ssl://HOST:PORT (an Electrum server: electrs, Fulcrum, ElectrumX; batched \
            requests over at most --parallel persistent connections; for a self-signed certificate, --electrum-cert FILE \
            or --electrum-fingerprint HEX), eth-rpc:URL, etherscan[:URL] (key from --etherscan-key-env, default ETHERSCAN_API_KEY), or lua:SCRIPT (a \
            Lua file returning function(addresses) -> list of booleans).
            Network: every connection goes through --proxy URL when given (socks5h://HOST:PORT lets the proxy resolve \
            names: Tor), else as ALL_PROXY, HTTPS_PROXY, HTTP_PROXY and NO_PROXY say (docs/proxies.md); HTTP \
            connections are kept alive, at most --parallel of them.
            A scan stops with an error after --max-addresses addresses (default 1000000), so a source that calls \
            every address used cannot run forever.
            With --checkpoint FILE answers are kept as they arrive; rerun the same command to resume after an \
            interruption (Ctrl-C saves and exits with status 130). Rerun after the scan finished, it takes the used \
            addresses from the file and asks about the others again, so new transactions are seen.
            Output: a table, or --json / --csv, on standard output; a progress line on standard error when it is a terminal.
            """
            + "\n" + HelpExamples.text(
                "keyhost discover --xpub \"$(keyhost key xpub)\" --source index:used.txt --json",
                "keyhost discover --coin btc --purpose 84 --source index:used.txt --gap-limit 5   # the mnemonic of KEYHOST_MNEMONIC",
                "keyhost discover --card virtual --card-state c.json --source index:used.txt --csv",
                "keyhost discover --xpub \"$(keyhost key xpub)\" --source esplora:http://127.0.0.1:3002")
    )

    @Option(help: ArgumentHelp("An account-level extended public key (xpub, ypub, zpub, tpub, ...).", valueName: "key"))
    var xpub: String?

    @Option(help: ArgumentHelp("An output descriptor to scan instead of keys and a scheme: one <0;1> multipath descriptor, or twice (receive, then change).", valueName: "descriptor"))
    var descriptor: [String] = []

    /// The mnemonic and passphrase, read as every command that takes a mnemonic reads them.
    @OptionGroup var secrets: MnemonicOptions

    /// The job code names the wallet options given on the command line by these.
    var mnemonicEnv: String? { secrets.mnemonicEnv }
    var passphraseEnv: String? { secrets.passphraseEnv }

    @Option(help: ArgumentHelp("Use a Keycard: a reader name or number, or 'virtual'; alone, $KEYHOST_READER, else the first reader with a card.", valueName: "reader"))
    var card: String?

    @Option(help: ArgumentHelp("With --card: the software card's state file (implies the software card). Default with the virtual reader: $KEYHOST_CARD_STATE.", valueName: "file"))
    var cardState: String?

    @OptionGroup var proxyOptions: ProxyOptions

    /// Taken into --card's value by `normalize`; left here only when it cannot be.
    @Option(help: ArgumentHelp("The reader, as every command names it: --card --reader N|NAME|virtual (the same as --card READER here).", valueName: "reader"))
    var reader: String?

    @OptionGroup var trust: TrustedCAOptions

    @Option(help: ArgumentHelp("Read the card PIN from environment variable VAR (default KEYHOST_PIN, else a prompt).", valueName: "var"))
    var pinEnv: String?

    @Option(help: ArgumentHelp("Read the pairing password from VAR (default KEYHOST_PAIRING_PASSWORD, else a prompt).", valueName: "var"))
    var pairingPasswordEnv: String?

    @Option(help: ArgumentHelp("Coin symbol or SLIP-44 number (btc, test, ltc, eth, ...).", valueName: "coin"))
    var coin: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("BIP43 purpose: 44, 49, 84 or 86.", valueName: "n"))
    var purpose: UInt32?

    @Option(help: ArgumentHelp("Address kind: p2pkh, p2sh-p2wpkh, p2wpkh, p2tr, ethereum.", valueName: "kind"))
    var kind: String?

    @Option(help: ArgumentHelp("bip44, bip49, bip84, bip86, ethereum or ethereum-per-index (Ledger Live).", valueName: "scheme"))
    var scheme: String?

    @Option(help: ArgumentHelp("A custom path template, e.g. m/44'/60'/{account}'/0/{index}.", valueName: "template"))
    var template: String?

    // Numbers are read unconditionally so that "-1" is a value to refuse with a message, not an unknown flag.
    @Option(parsing: .unconditional, help: ArgumentHelp("Consecutive unused addresses that end a chain (both chains unless --change-gap-limit).", valueName: "n"))
    var gapLimit: Int = 20

    @Option(parsing: .unconditional, help: ArgumentHelp("Consecutive unused change addresses that end the change chain (default: --gap-limit).", valueName: "n"))
    var changeGapLimit: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Consecutive empty accounts that end the scan (1: stop at the first, as BIP44).", valueName: "n"))
    var accountGap: Int = 1

    @Option(parsing: .unconditional, help: ArgumentHelp("Accounts to consider, A-B or A.", valueName: "range"))
    var accounts: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Address indexes to consider on each chain, A-B or A.", valueName: "range"))
    var indexes: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Most addresses one scan checks, over all chains and accounts.", valueName: "n"))
    var maxAddresses: Int = DiscoveryOptions.defaultMaxAddresses

    @Option(help: ArgumentHelp("Where usage comes from: index:FILE, esplora:URL, electrum:tcp://HOST:PORT, electrum:ssl://HOST:PORT, eth-rpc:URL, etherscan[:URL], lua:SCRIPT.", valueName: "source"))
    var source: String

    @Option(parsing: .unconditional, help: ArgumentHelp("HTTP requests in flight at once (Electrum: connections).", valueName: "n"))
    var parallel: Int = 4

    @Option(parsing: .unconditional, help: ArgumentHelp("Retries after a failed request or a broken connection (with exponential backoff).", valueName: "n"))
    var retries: Int = 5

    @Option(help: ArgumentHelp("With electrum:ssl://: trust only this PEM certificate (the server's own self-signed one, or the authority that signed it).", valueName: "file"))
    var electrumCert: String?

    @Option(help: ArgumentHelp("With electrum:ssl://: accept the server's certificate by its SHA-256 fingerprint (hex, colons allowed).", valueName: "hex"))
    var electrumFingerprint: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("With electrum:: seconds an idle connection waits before a server.ping keeps it open (default 60).", valueName: "seconds"))
    var electrumKeepAlive: Double?

    @Option(help: ArgumentHelp("The environment variable holding the Etherscan API key.", valueName: "var"))
    var etherscanKeyEnv: String = DiscoverySetup.defaultEtherscanKeyVariable

    @Option(help: ArgumentHelp("Keep answers in FILE and resume from it (with --jobs: the finished wallets).", valueName: "file"))
    var checkpoint: String?

    @Option(help: ArgumentHelp("Scan many wallets: a file of JSON lines, one wallet per line ({\"id\", \"xpub\" | \"descriptor\" | \"mnemonic_env\", options}), or - for standard input; see docs/discovery-jobs.md.", valueName: "file"))
    var jobs: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("With --jobs: wallets scanned at once; they share the source's connections and --rate.", valueName: "n"))
    var walletsAtOnce: Int = 4

    @Option(parsing: .unconditional, help: ArgumentHelp("At most N requests a second to the source (HTTP requests, Electrum messages), over the whole run.", valueName: "n"))
    var rate: Double?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "Print CSV, one row per used address.")
    var csv = false

    @Flag(help: "No progress line, even on a terminal.")
    var quiet = false

    /// What a lone `--card` becomes.
    static let firstReader = "@first"

    /// `--card` may stand alone (the first reader); the parser needs a value, so one is put in. Every
    /// other command names the reader as `--card --reader N|NAME|virtual`; discover takes that form too
    /// (folded into `--card`'s value here), besides its own shorter `--card READER`.
    static func normalize(_ arguments: [String]) -> [String] {
        guard arguments.first == "discover" else { return arguments }
        var args = arguments
        var reader: String?
        if let end = args.firstIndex(of: "--") ?? Optional(args.endIndex),
           let at = args[..<end].firstIndex(where: { $0 == "--reader" || $0.hasPrefix("--reader=") }) {
            if args[at] == "--reader", at + 1 < end {
                reader = args[at + 1]
                args.removeSubrange(at...(at + 1))
            } else if args[at].hasPrefix("--reader=") {
                reader = String(args[at].dropFirst("--reader=".count))
                args.remove(at: at)
            }
        }
        var out = [String]()
        var i = 0
        var folded = false
        while i < args.count {
            let argument = args[i]
            out.append(argument)
            if argument == "--" { out += args[(i + 1)...]; break }
            if argument == "--card" && (i + 1 == args.count || args[i + 1].hasPrefix("-")) {
                out.append(reader ?? firstReader)
                folded = reader != nil
            }
            i += 1
        }
        // --reader with --card READER, or without --card: left for validate() to name.
        if let reader, !folded { out += ["--reader", reader] }
        return out
    }

    /// --mnemonic-env's variable, or KEYHOST_MNEMONIC when it is set and neither --xpub nor --card is given.
    var mnemonicVariable: String? {
        SecretEnvironment.mnemonicVariable(mnemonicEnv, otherSource: xpub != nil || card != nil || !descriptor.isEmpty || jobs != nil)
    }

    func validate() throws {
        let keySources = [xpub.map { _ in "--xpub" }, mnemonicVariable.map { _ in "--mnemonic-env" }, card.map { _ in "--card" },
                          descriptor.isEmpty ? nil : "--descriptor"].compactMap { $0 }
        if let rate, !(rate > 0 && rate <= 1_000_000) {
            throw ValidationError("--rate must be a number of requests a second above 0, got \(rate)")
        }
        if jobs != nil { try validateJob() }
        // No key source named: the mnemonic, asked on the terminal, as every command that takes a key asks it.
        guard keySources.count <= 1 || jobs != nil else {
            throw ValidationError("\(keySources.joined(separator: " and ")) exclude each other; give one key source")
        }
        if let other = keySources.first(where: { $0 != "--mnemonic-env" }) ?? (jobs != nil ? "--jobs" : nil) { try secrets.refuse(with: other) }
        // Decided by the decoded version bytes (Ltpv, dgpv, " zprv…" all are private), never by prefix text.
        if let xpub, HDNode.isExtendedPrivateKey(xpub) == true {
            throw ValidationError("--xpub was given an extended PRIVATE key; it is a secret and must not be on the command line. "
                + "Give the account's extended public key, or the mnemonic with --mnemonic-env")
        }
        if let reader {
            throw ValidationError(card == nil ? "--reader goes with --card: --card --reader \(reader)"
                : "give the reader once: --card --reader \(reader), or --card \(reader)")
        }
        if cardState != nil, let card, card != Self.firstReader, card.lowercased() != "virtual" {
            throw ValidationError("--card-state goes with --card virtual (or --card --reader virtual)")
        }
        if cardState != nil && card == nil { throw ValidationError("--card-state goes with --card (it implies the software card)") }
        if trust.given && card == nil { throw ValidationError("--trusted-ca goes with --card") }
        if (pinEnv != nil || pairingPasswordEnv != nil) && card == nil { throw ValidationError("--pin-env and --pairing-password-env go with --card") }
        if json && csv { throw ValidationError("--json and --csv exclude each other") }
        guard gapLimit >= 1 else {
            throw ValidationError("--gap-limit must be a positive integer (at least 1), got \(gapLimit): it is how many consecutive unused addresses end a chain's scan; BIP44 uses 20")
        }
        if let changeGapLimit, changeGapLimit < 1 {
            throw ValidationError("--change-gap-limit must be a positive integer (at least 1), got \(changeGapLimit): it is how many consecutive unused change addresses end the change chain")
        }
        guard accountGap >= 1 else {
            throw ValidationError("--account-gap must be a positive integer (at least 1), got \(accountGap): it is how many consecutive empty accounts end the scan; 1 stops at the first, as BIP44")
        }
        guard maxAddresses >= 1 else {
            throw ValidationError("--max-addresses must be a positive integer (at least 1), got \(maxAddresses): it caps the addresses one scan checks")
        }
        guard parallel >= 1 else { throw ValidationError("--parallel must be a positive integer (at least 1), got \(parallel): it is how many HTTP requests are in flight at once") }
        guard retries >= 0 else { throw ValidationError("--retries must be 0 or more, got \(retries): it is how many times a failed HTTP request is tried again") }
        if electrumCert != nil || electrumFingerprint != nil || electrumKeepAlive != nil {
            let given = [electrumCert.map { _ in "--electrum-cert" }, electrumFingerprint.map { _ in "--electrum-fingerprint" },
                         electrumKeepAlive.map { _ in "--electrum-keep-alive" }].compactMap { $0 }.joined(separator: " and ")
            guard source.lowercased().hasPrefix("electrum:") else {
                throw ValidationError("\(given) go\(given.contains(" and ") ? "" : "es") with an Electrum source: --source electrum:ssl://HOST:PORT")
            }
            do { try electrumOptions.validate() } catch { throw ValidationError("\(error)") }
            if electrumCert != nil || electrumFingerprint != nil,
               let server = try? ElectrumServer(String(source.dropFirst("electrum:".count))), !server.useTLS {
                throw ValidationError("--electrum-cert and --electrum-fingerprint pin a TLS certificate: they need electrum:ssl://, not \(server)")
            }
        }
        if let accounts { _ = try Self.range(accounts, "--accounts") }
        if let indexes { _ = try Self.range(indexes, "--indexes") }
        if !source.lowercased().hasPrefix("lua:") {
            do { _ = try DiscoverySetup.splitSource(source) } catch { throw ValidationError("--source: \(error)") }
        } else if source.count <= 4 {
            throw ValidationError("--source lua: needs a script file, e.g. lua:usage.lua")
        }
        if let coin, Coin.named(coin) == nil && UInt32(coin).flatMap(Coin.withSLIP44) == nil {
            throw ValidationError("--coin: unknown coin \"\(coin)\"; use one of \(Coin.all.map { $0.symbol.lowercased() }.joined(separator: ", "))")
        }
        if let kind, AddressKind(name: kind) == nil {
            throw ValidationError("--kind: unknown address kind \"\(kind)\"; use one of \(AddressKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if !descriptor.isEmpty { _ = try descriptorWallet(); return }
        // A malformed key or a scheme that cannot be (purpose 45, Ethereum with 84) is a bad option
        // value: a usage error (64) before anything runs, like an unknown --coin.
        var family: ExtendedKeyVersion?
        if let xpub {
            do { family = try ExtendedPublicKeySource(xpub).key.family } catch { throw ValidationError("--xpub: \(error)") }
        }
        do { _ = try DiscoverySetup.scheme(schemeRequest(family: family)) } catch { throw ValidationError("\(error)") }
    }

    /// The scheme the options ask for; `family` is the --xpub's SLIP-132 family, when known.
    func schemeRequest(family: ExtendedKeyVersion?) -> DiscoverySetup.SchemeRequest {
        DiscoverySetup.SchemeRequest(
            coin: coin.map { Coin.named($0) ?? UInt32($0).flatMap(Coin.withSLIP44) ?? .bitcoin }, purpose: purpose,
            kind: kind.flatMap(AddressKind.init(name:)), scheme: scheme, template: template, keyFamily: family)
    }

    /// The Electrum source's options as given.
    var electrumOptions: ElectrumOptions {
        ElectrumOptions(certificateFile: electrumCert, fingerprint: electrumFingerprint, clientName: DiscoverySetup.electrumClientName,
                        keepAlive: electrumKeepAlive ?? ElectrumOptions().keepAlive)
    }

    static func range(_ text: String, _ name: String) throws -> ClosedRange<UInt32> {
        do { return try DiscoverySetup.range(text, name: name) } catch { throw ValidationError("\(error)") }
    }

    func run() throws {
        try Failure.exitOnError { try discover() }
    }

    /// The network options: parallelism, retries, proxy, rate.
    func httpOptions() throws -> HTTPOptions {
        var http = HTTPOptions(maxConcurrentRequests: parallel, maxRetries: retries)
        http.proxy = try proxyOptions.settings()
        http.rateLimiter = rate.map { RateLimiter(perSecond: $0) }
        return http
    }

    private func environmentValue(_ variable: String, what: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw Failure.kind("no_secret", "the environment variable \(variable) (\(what)) is not set or empty; export \(variable)=...")
        }
        return value
    }

    private func discover() throws {
        if let jobs {
            try runJob(jobs, http: try httpOptions())
            return
        }
        // Keys.
        var keys: AccountKeySource
        var family: ExtendedKeyVersion?
        var cardConnection: DiscoveryCardConnection?
        defer { cardConnection?.close() }
        let wallet = try descriptorWallet()
        if let wallet {
            keys = wallet
        } else if let xpub {
            let source: ExtendedPublicKeySource
            do { source = try ExtendedPublicKeySource(xpub) } catch { throw Failure.kind("invalid_argument", "--xpub: \(error)") }
            family = source.key.family
            keys = source
        } else if card == nil {
            keys = try SeedKeySource(seed: secrets.seed(alternatives: "; or use --xpub KEY, --card or --descriptor D"))
        } else {
            // The card options of every command, with discover's spelling of the reader (--card READER).
            var options = try CardOptions.parse([])
            options.reader = card == Self.firstReader ? nil : card
            options.cardState = cardState
            options.trust = trust
            options.pinEnv = pinEnv
            options.pairingPasswordEnv = pairingPasswordEnv
            let connection = try DiscoveryCardConnection(try options.request(), readers: [PCSCReaders()],
                                                         frontEnd: options.frontEnd(virtualCard: "--card virtual --card-state FILE"))
            cardConnection = connection
            keys = connection.keySource
        }

        // Scheme and limits.
        let scheme = try wallet?.scheme ?? DiscoverySetup.scheme(schemeRequest(family: family))
        var options = DiscoveryOptions(receiveGapLimit: gapLimit, changeGapLimit: changeGapLimit ?? gapLimit, accountGapLimit: accountGap,
                                       maxAddresses: maxAddresses)
        if let accounts { options.accounts = try Self.range(accounts, "--accounts") }
        if let indexes { options.indexes = try Self.range(indexes, "--indexes") }
        let http = try httpOptions()

        // Usage. Ctrl-C stops the scan between batches (the engine checks), with the checkpoint saved.
        let usage: UsageSource
        if source.lowercased().hasPrefix("lua:") {
            usage = try LuaUsageFunction.source(script: String(source.dropFirst(4)))
        } else {
            usage = try DiscoverySetup.usageSource(source, coin: scheme.coin, http: http, electrum: electrumOptions,
                                                   etherscanKeyVariable: etherscanKeyEnv,
                                                   spell: { "--" + $0.replacing("_", with: "-") })
        }

        let engine = try wallet.map { try DiscoveryEngine(descriptors: $0, usage: usage, options: options) }
            ?? DiscoveryEngine(scheme: scheme, keys: keys, usage: usage, options: options)
        engine.checkpointPath = checkpoint
        let bar = !quiet && isatty(STDERR_FILENO) != 0 ? ProgressLine(options: options) : nil
        if let bar { engine.progress = { bar.update($0) } }
        let result: DiscoveryResult
        var interrupted = false
        do {
            result = try Interruption.whileRunning {
                defer { interrupted = Interruption.isRequested }
                return try engine.run()
            }
            bar?.finish()
        } catch {
            bar?.finish()
            if interrupted || error is InterruptedError {
                let resume = checkpoint.map { "; the checkpoint \($0) keeps every answer so far: rerun the same command to resume" }
                    ?? "; nothing was kept (use --checkpoint FILE to resume long jobs)"
                Failure.report(Failure.kind("interrupted", "interrupted" + resume))
                throw ExitCode(130)
            }
            throw error
        }
        if json {
            print(result.record.json())
        } else if csv {
            print(result.csv(), terminator: "")
        } else {
            print(result.table(), terminator: "")
            if let cardConnection {
                print("card: \(cardConnection.exportCommands) EXPORT KEY for \(result.accounts.count) account(s), \(cardConnection.apduCount) APDUs in all")
            }
        }
    }
}

/// One status line on standard error, redrawn in place: accounts, addresses checked, rate, and, when it says
/// something, an ETA for the least work left (if nothing more turns out used).
final class ProgressLine {
    private let options: DiscoveryOptions
    private var lastDraw = 0.0
    private var account: UInt32?
    private var accountStart = 0
    private var lastUsedCount = 0
    private var lastUsedAt = 0
    private var emptyAccounts = 0
    private var usedInAccount = false
    private var width = 0

    init(options: DiscoveryOptions) { self.options = options }

    func update(_ p: DiscoveryProgress) {
        if p.currentAccount != account {
            if account != nil { emptyAccounts = usedInAccount ? 0 : emptyAccounts + 1 }
            account = p.currentAccount
            accountStart = p.addressesChecked
            lastUsedAt = p.addressesChecked
            usedInAccount = false
        }
        if p.usedFound != lastUsedCount {
            lastUsedCount = p.usedFound
            lastUsedAt = p.addressesChecked
            usedInAccount = true
        }
        guard p.elapsed - lastDraw >= 0.1 || lastDraw == 0 else { return }
        lastDraw = p.elapsed
        let text = line(p)
        let padded = text.count < width ? text + String(repeating: " ", count: width - text.count) : text
        width = text.count
        fputs("\r" + padded, stderr)
    }

    /// The status line for `p`, after `update` has taken it in.
    func line(_ p: DiscoveryProgress) -> String {
        let perAccount = options.receiveGapLimit + options.changeGapLimit
        let thisAccount = max(0, perAccount - (p.addressesChecked - lastUsedAt))
        let moreAccounts = max(0, options.accountGapLimit - emptyAccounts - (usedInAccount ? 0 : 1)) + (usedInAccount ? options.accountGapLimit : 0)
        let left = thisAccount + moreAccounts * perAccount
        return "account \(account.map(String.init) ?? "-") (\(p.accountsDone) done) | \(p.addressesChecked) addresses checked, "
            + "\(p.usedFound) used | \(CFormat.fixed(p.rate, digits: 0))/s" + (Self.eta(left: left, rate: p.rate).map { " | ETA ≥ \($0)" } ?? "")
    }

    /// The least time the work left can take, or nil when that says nothing: no rate yet (the first batch), or
    /// under a second (it rounded to "≥ 0s" before, which is true of any scan).
    static func eta(left: Int, rate: Double) -> String? {
        guard rate > 0 else { return nil }
        let seconds = Double(left) / rate
        guard seconds >= 1 else { return nil }
        return "\(CFormat.fixed(seconds, digits: 0))s"
    }

    func finish() {
        guard width > 0 else { return }
        fputs("\r" + String(repeating: " ", count: width) + "\r", stderr)
        width = 0
    }
}
