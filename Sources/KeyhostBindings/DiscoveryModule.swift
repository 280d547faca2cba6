import KeyhostServices
import KeyhostCard
import KeyhostCrypto
import KeyhostDiscovery
import KeyhostHTTP
import LuaRuntime

/// `keyhost.discovery`: BIP44-style account discovery (gap limits) over an xpub, a mnemonic or seed, or a card,
/// with usage from an index file, an HTTP service or a Lua function. A thin layer over `KeyhostDiscovery`.
enum DiscoveryModule {
    static let scanOptions = ["xpub", "mnemonic", "passphrase", "seed", "card", "coin", "purpose", "kind", "scheme", "template",
                              "gap_limit", "change_gap_limit", "account_gap", "accounts", "indexes", "source", "parallel", "timeout",
                              "retries", "batch_size", "max_addresses", "checkpoint", "on_progress", "api_key_env", "chain_id",
                              "electrum_cert", "electrum_fingerprint", "electrum_keep_alive", "descriptors", "proxy", "proxy_isolate", "rate"]

    static func register(in state: LuaState) {
        state.registerModule("keyhost.discovery") { module in
            module.function("scan") { ctx in try ctx.return(.table(try scan(ctx))) }
            module.function("scan_jobs") { ctx in try ctx.return(.table(try scanJobs(ctx))) }
            module.value("schemes", .table(LuaTable(array: DiscoverySetup.schemeNames.map { .text($0) })))
        }
    }

    /// A failure inside a Lua callback, kept so the scan ends with that very error (tables and all).
    final class CallbackFailure {
        var error: Error?
    }

    static func scan(_ ctx: LuaContext) throws -> LuaTable {
        let opts = try Options(ctx, 1, allowed: scanOptions)
        if ctx.isNil(1) { throw LuaArgumentError(1, "options table expected, e.g. {xpub = \"zpub...\", source = \"index:used.txt\"}") }
        let failure = CallbackFailure()

        // Keys.
        let keyOptions = ["xpub", "mnemonic", "seed", "card", "descriptors"].filter(opts.has)
        guard keyOptions.count == 1 else {
            throw LuaArgumentError(1, keyOptions.isEmpty ? "no key source: give one of xpub, mnemonic, seed, card or descriptors"
                : "options \(keyOptions.map { "'\($0)'" }.joined(separator: " and ")) exclude each other; give one key source")
        }
        if opts.has("passphrase") && !opts.has("mnemonic") { throw LuaArgumentError(1, "option 'passphrase' goes with 'mnemonic'") }
        var keys: AccountKeySource
        var family: ExtendedKeyVersion?
        var exporter: CardAccountExporter?
        let wallet = try descriptorWallet(ctx, opts)
        if let wallet {
            keys = wallet
        } else if let text = try opts.string("xpub") {
            let source: ExtendedPublicKeySource
            do { source = try ExtendedPublicKeySource(text) } catch {
                throw LuaArgumentError(1, "option 'xpub': \(error)")
            }
            family = source.key.family
            keys = source
        } else if let phrase = try opts.string("mnemonic") {
            let mnemonic: Mnemonic
            do { mnemonic = try Mnemonic(phrase: phrase) } catch { throw LuaArgumentError(1, "option 'mnemonic': \(error)") }
            keys = try SeedKeySource(mnemonic: mnemonic, passphrase: try opts.string("passphrase") ?? "")
        } else if var seed = try opts.bytes("seed") {
            defer { zero(&seed) }
            guard (16...64).contains(seed.count) else {
                throw LuaArgumentError(1, "option 'seed' is \(seed.count) bytes; a BIP32 seed is 16 to 64 bytes (hd.mnemonic_to_seed gives 64)")
            }
            keys = try SeedKeySource(seed: SecretBytes(seed))
        } else {
            let cardExporter: CardAccountExporter
            let readerName: String
            switch try cardArgument(ctx, opts) {
            case .session(let session):
                let card = try session.live()
                guard card.isSecureChannelOpen, session.pinVerified else {
                    throw LuaArgumentError(1, "option 'card': the session has no verified PIN; call s:auto{...} (or open the secure channel and verify the PIN) first")
                }
                cardExporter = CardAccountExporter(card: card)
                readerName = session.readerName
            case .signer(let object):
                let card = try object.live()
                cardExporter = CardAccountExporter(signer: card.signer, identity: try cardCall("EXPORT KEY") { try card.identity() })
                readerName = card.readerName
            }
            exporter = cardExporter
            keys = try cardExporter.keySource(label: "card in \(readerName)")
        }

        // Scheme.
        var request = DiscoverySetup.SchemeRequest(coin: try opts.coin(), kind: try opts.kind(), scheme: try opts.string("scheme"),
                                                   template: try opts.string("template"), keyFamily: family)
        if let purpose = try opts.integer("purpose") {
            guard let value = UInt32(exactly: purpose) else { throw LuaArgumentError(1, "option 'purpose' is \(purpose); use 44, 49, 84 or 86") }
            request.purpose = value
        }
        let scheme: DiscoveryScheme
        do { scheme = try wallet?.scheme ?? DiscoverySetup.scheme(request) } catch let error as DiscoverySetupError {
            throw LuaArgumentError(1, error.description)
        }

        // Limits.
        var options = DiscoveryOptions()
        let gap = try positive(opts, "gap_limit", default: 20, what: "how many consecutive unused addresses end a chain's scan", hint: "BIP44 uses 20")
        options.receiveGapLimit = gap
        options.changeGapLimit = try positive(opts, "change_gap_limit", default: gap, what: "how many consecutive unused change addresses end the change chain's scan", hint: "it defaults to gap_limit")
        options.accountGapLimit = try positive(opts, "account_gap", default: 1, what: "how many consecutive empty accounts end the scan", hint: "1 stops at the first empty account, as BIP44")
        options.accounts = try range(opts, "accounts")
        options.indexes = try range(opts, "indexes")
        if opts.has("max_addresses") {
            options.maxAddresses = try positive(opts, "max_addresses", default: DiscoveryOptions.defaultMaxAddresses,
                                                what: "the most addresses one scan checks", hint: "default 1000000")
        }
        if opts.has("batch_size") { options.batchSize = try positive(opts, "batch_size", default: 100, what: "the most addresses asked of the source at once", hint: "default 100") }

        // Usage.
        let http = try httpOptions(opts)
        let usage = try usageSource(ctx, opts, scheme: scheme, http: http, failure: failure)

        // Run.
        let engine = try wallet.map { try DiscoveryEngine(descriptors: $0, usage: usage, options: options) }
            ?? DiscoveryEngine(scheme: scheme, keys: keys, usage: usage, options: options)
        engine.checkpointPath = try opts.string("checkpoint")
        switch opts["on_progress"] {
        case .nil: break
        case .reference(let function) where function.typeName == "function":
            engine.progress = { progress in
                guard failure.error == nil else { return }
                do { _ = try ctx.call(function, [.table(progressTable(progress))]) } catch { failure.error = error }
            }
        default:
            throw LuaArgumentError(1, "option 'on_progress' must be a function, got \(opts["on_progress"].typeName)")
        }
        let result: DiscoveryResult
        do {
            result = try engine.run()
        } catch {
            throw failure.error ?? error
        }
        if let error = failure.error { throw error }
        var table = resultTable(result)
        if let exporter {
            var totals = table["totals"]
            if case .table(var t) = totals { t["key_exports"] = .integer(Int64(exporter.exportCommands)); totals = .table(t) }
            table["totals"] = totals
        }
        return table
    }

    /// The network options of a scan or a job: parallel, timeout, retries, proxy, proxy_isolate, rate.
    static func httpOptions(_ opts: Options, isolate: Bool = true) throws -> HTTPOptions {
        var http = HTTPOptions()
        http.proxy = try opts.proxies(isolate: isolate ? "proxy_isolate" : nil)
        if opts.has("parallel") { http.maxConcurrentRequests = try positive(opts, "parallel", default: 4, what: "the HTTP requests in flight at once", hint: "default 4") }
        if opts.has("timeout") { http.timeout = try seconds(opts, "timeout") }
        if let retries = try opts.integer("retries") {
            guard retries >= 0 else { throw LuaArgumentError(1, "option 'retries' is \(retries); use 0 or more") }
            http.maxRetries = Int(clamping: retries)
        }
        if opts.has("rate") {
            let rate: Double
            switch opts["rate"] {
            case .integer(let n): rate = Double(n)
            case .number(let n): rate = n
            default: throw LuaArgumentError(1, "option 'rate' must be a number of requests a second, got \(opts["rate"].typeName)")
            }
            guard rate > 0 && rate <= 1_000_000 else { throw LuaArgumentError(1, "option 'rate' is \(rate); it must be above 0 requests a second") }
            http.rateLimiter = RateLimiter(perSecond: rate)
        }
        return http
    }

    /// The Electrum options (electrum_cert, electrum_fingerprint, electrum_keep_alive).
    static func electrumOptions(_ opts: Options) throws -> ElectrumOptions {
        var electrum = ElectrumOptions(certificateFile: try opts.string("electrum_cert"), fingerprint: try opts.string("electrum_fingerprint"),
                                       clientName: DiscoverySetup.electrumClientName)
        if opts.has("electrum_keep_alive") { electrum.keepAlive = try seconds(opts, "electrum_keep_alive") }
        do { try electrum.validate() } catch { throw LuaArgumentError(1, "\(error)") }
        return electrum
    }

    /// The `card` option as a session object.
    private static func cardArgument(_ ctx: LuaContext, _ opts: Options) throws -> CardArgument {
        guard case .reference(let reference) = opts["card"], reference.typeName == "userdata" else {
            throw LuaArgumentError(1, "option 'card' must be a \(CardSessionObject.luaTypeName) (card.open{...}) or a \(CardSignerObject.luaTypeName) "
                                   + "(card.signer{...}), got \(opts["card"].typeName)")
        }
        do { return try CardArgument.card(ctx, reference, what: "option 'card'") } catch let error as LuaError {
            if case .runtime(let message) = error { throw LuaArgumentError(1, message) }
            throw error
        }
    }

    static func positive(_ opts: Options, _ key: String, default value: Int, what: String, hint: String) throws -> Int {
        guard let raw = try opts.integer(key) else { return value }
        guard raw >= 1 else {
            throw LuaArgumentError(1, "option '\(key)' is \(raw): it is \(what) and must be at least 1 (\(hint))")
        }
        return Int(clamping: raw)
    }

    static func seconds(_ opts: Options, _ key: String) throws -> Double {
        switch opts[key] {
        case .integer(let n) where n > 0: return Double(n)
        case .number(let n) where n > 0 && n.isFinite: return n
        default: throw LuaArgumentError(1, "option '\(key)' must be a positive number of seconds")
        }
    }

    /// `{from, to}` or a single number, each 0...2^31-1.
    static func range(_ opts: Options, _ key: String) throws -> ClosedRange<UInt32> {
        let limit = Int64(DerivationLimit.maxIndex)
        func bound(_ value: LuaValue) throws -> UInt32 {
            let number: Int64
            switch value {
            case .integer(let n): number = n
            case .number(let n) where Int64(exactly: n) != nil: number = Int64(exactly: n)!
            default: throw LuaArgumentError(1, "option '\(key)' takes {from, to} with integers, got \(value.typeName)")
            }
            guard (0...limit).contains(number) else { throw LuaArgumentError(1, "option '\(key)': \(number) is outside 0...\(limit)") }
            return UInt32(number)
        }
        switch opts[key] {
        case .nil: return 0...DerivationLimit.maxIndex
        case .integer, .number: let n = try bound(opts[key]); return n...n
        case .table(let table):
            guard table.array.count == 2, table.fields.isEmpty else { throw LuaArgumentError(1, "option '\(key)' takes {from, to}, e.g. {0, 9}") }
            let (from, to) = (try bound(table.array[0]), try bound(table.array[1]))
            guard from <= to else { throw LuaArgumentError(1, "option '\(key)' is {\(from), \(to)}: from must not be above to") }
            return from...to
        default:
            throw LuaArgumentError(1, "option '\(key)' takes {from, to}, got \(opts[key].typeName)")
        }
    }

    /// `source`: a string naming a source, a Lua function, or a list / set of used addresses.
    private static func usageSource(_ ctx: LuaContext, _ opts: Options, scheme: DiscoveryScheme, http: HTTPOptions,
                                    failure: CallbackFailure) throws -> UsageSource {
        let spec = opts["source"].stringValue
        if let given = ["electrum_cert", "electrum_fingerprint", "electrum_keep_alive"].first(where: opts.has),
           spec.flatMap({ try? DiscoverySetup.splitSource($0).kind }) != "electrum" {
            throw LuaArgumentError(1, "option '\(given)' goes with an Electrum source, source = \"electrum:ssl://HOST:PORT\"")
        }
        switch opts["source"] {
        case .nil:
            throw LuaArgumentError(1, "option 'source' is missing: say where usage comes from (\(DiscoverySetup.sourceForms), "
                + "a function(addresses) returning booleans, or a list of used addresses)")
        case .string:
            let spec = try opts.string("source") ?? ""
            do { _ = try DiscoverySetup.splitSource(spec) } catch let error as DiscoverySetupError {
                throw LuaArgumentError(1, "option 'source': \(error.description)")
            }
            let chainID = try opts.integer("chain_id").map { Int(clamping: $0) }
            return try DiscoverySetup.usageSource(spec, coin: scheme.coin, http: http, electrum: try electrumOptions(opts),
                                                  etherscanKeyVariable: try opts.string("api_key_env") ?? DiscoverySetup.defaultEtherscanKeyVariable,
                                                  chainID: chainID, spell: { "option '\($0)'" })
        case .table(let table):
            var list = [String]()
            for value in table.array { if let text = value.stringValue { list.append(text) } }
            for (key, value) in table.fields where value != .boolean(false) && !value.isNil {
                if let text = key.stringValue { list.append(text) }
            }
            return IndexFileUsageSource(addresses: list, name: "table of \(list.count) used addresses")
        case .reference(let function) where function.typeName == "function":
            return ClosureUsageSource(name: "lua function") { addresses in
                if let error = failure.error { throw error }
                let results: [LuaValue]
                do {
                    results = try ctx.call(function, [.table(LuaTable(array: addresses.map { .text($0) }))])
                } catch {
                    failure.error = error
                    throw error
                }
                do {
                    return try UsageAnswer.flags(results.first ?? .nil, for: addresses, allowSet: true)
                } catch {
                    failure.error = error
                    throw error
                }
            }
        default:
            throw LuaArgumentError(1, "option 'source' must be a string, a function or a table, got \(opts["source"].typeName)")
        }
    }

    static func progressTable(_ p: DiscoveryProgress) -> LuaTable {
        LuaTable(["accounts_done": .integer(Int64(p.accountsDone)), "account": p.currentAccount.map { .integer(Int64($0)) } ?? .nil,
                  "addresses_checked": .integer(Int64(p.addressesChecked)), "addresses_queried": .integer(Int64(p.addressesQueried)),
                  "used_found": .integer(Int64(p.usedFound)), "elapsed": .number(p.elapsed), "rate": .number(p.rate)])
    }

    static func resultTable(_ r: DiscoveryResult) -> LuaTable {
        guard case .table(let table) = LuaValue(record: r.record) else { return LuaTable() }
        return table
    }
}
