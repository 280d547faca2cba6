import KeyhostCrypto
import KeyhostDiscovery
import KeyhostFiles
import KeyhostHTTP
import KeyhostRecord
import KeyhostServices
import LuaRuntime

/// `discovery.scan_jobs(jobs, opts)`: `keyhost discover --jobs` from Lua. `jobs` is a job file's name or a list of
/// wallet tables with the job file's keys (`{id = "a", xpub = "zpub…"}`, docs/discovery-jobs.md). The wallets run on
/// threads of their own, so nothing of Lua runs meanwhile: no function source, no progress callback. Returns one
/// table per wallet in order: `{id, ok = true, resumed, result}` or `{id, ok = false, error = {kind, message}}`.
extension DiscoveryModule {
    static let jobOptions = ["source", "parallel", "timeout", "retries", "proxy", "proxy_isolate", "rate", "wallets_at_once", "checkpoint",
                             "electrum_cert", "electrum_fingerprint", "electrum_keep_alive", "api_key_env", "chain_id", "coin", "purpose",
                             "kind", "scheme", "template", "gap_limit", "change_gap_limit", "account_gap", "accounts", "indexes", "max_addresses"]

    static func scanJobs(_ ctx: LuaContext) throws -> LuaTable {
        let opts = try Options(ctx, 2, allowed: jobOptions)
        let (bytes, name) = try jobLines(ctx)

        var defaults = DiscoveryJobDefaults()
        defaults.coin = try opts.coin()
        defaults.kind = try opts.kind()
        if let purpose = try opts.integer("purpose") {
            guard let value = UInt32(exactly: purpose) else { throw LuaArgumentError(2, "option 'purpose' is \(purpose); use 44, 49, 84 or 86") }
            defaults.purpose = value
        }
        defaults.scheme = try opts.string("scheme")
        defaults.template = try opts.string("template")
        defaults.gapLimit = try positive(opts, "gap_limit", default: 20, what: "how many consecutive unused addresses end a chain's scan", hint: "BIP44 uses 20")
        if opts.has("change_gap_limit") {
            defaults.changeGapLimit = try positive(opts, "change_gap_limit", default: defaults.gapLimit, what: "how many consecutive unused change addresses end the change chain's scan", hint: "it defaults to gap_limit")
        }
        defaults.accountGap = try positive(opts, "account_gap", default: 1, what: "how many consecutive empty accounts end the scan", hint: "1 stops at the first empty account")
        if opts.has("accounts") { defaults.accounts = try range(opts, "accounts") }
        if opts.has("indexes") { defaults.indexes = try range(opts, "indexes") }
        defaults.maxAddresses = try positive(opts, "max_addresses", default: DiscoveryOptions.defaultMaxAddresses, what: "the most addresses one scan checks", hint: "default 1000000")
        let concurrency = try positive(opts, "wallets_at_once", default: 4, what: "how many wallets are scanned at once", hint: "default 4")

        guard let spec = try opts.string("source") else {
            throw LuaArgumentError(2, "option 'source' is missing: a job's wallets share one source (\(DiscoverySetup.sourceForms))")
        }
        do { _ = try DiscoverySetup.splitSource(spec) } catch { throw LuaArgumentError(2, "option 'source': \(error)") }
        let http = try httpOptions(opts, isolate: false)
        let isolate = try opts.boolean("proxy_isolate") ?? false
        let base = try opts.proxies(isolate: nil)
        let electrum = try electrumOptions(opts)
        let keyVariable = try opts.string("api_key_env") ?? DiscoverySetup.defaultEtherscanKeyVariable
        let chainID = try opts.integer("chain_id").map { Int(clamping: $0) }
        let sources = SharedUsageSources(spec: spec, http: http, isolating: isolate ? base : nil, electrum: electrum,
                                         etherscanKeyVariable: keyVariable, chainID: chainID)
        let wallets: [JobWallet]
        do {
            wallets = try DiscoveryJobFile.wallets(bytes, name: name, defaults: defaults, usage: sources.source(for:wallet:))
        } catch let error as DiscoverySetupError {
            throw LuaArgumentError(1, error.description)
        }
        let checkpoint = try opts.string("checkpoint").map { try JobCheckpoint(path: $0, source: spec) }
        let job = try DiscoveryJob(wallets: wallets, concurrency: concurrency, checkpoint: checkpoint)
        var outcomes = [(JobWallet, JobOutcome)]()
        try job.run { _, wallet, outcome in outcomes.append((wallet, outcome)) }

        return LuaTable(array: outcomes.map { wallet, outcome in
            var row = LuaTable(["id": .text(wallet.id)])
            switch outcome {
            case .finished(let result, let resumed):
                row["ok"] = .boolean(true)
                row["resumed"] = .boolean(resumed)
                row["result"] = .table(resultTable(result))
            case .failed(let error):
                row["ok"] = .boolean(false)
                let record = (error as? StructuredError)?.errorRecord
                    ?? .object([("kind", .string("failed")), ("message", .string(String(describing: error)))])
                row["error"] = LuaValue(record: record)
            }
            return .table(row)
        })
    }

    /// Argument 1 as job-file bytes: a file's contents, or a list of wallet tables as JSON lines.
    private static func jobLines(_ ctx: LuaContext) throws -> ([UInt8], String) {
        switch try ctx.value(1) {
        case .string:
            let path = try ctx.string(1)
            do { return (try BoundedFile.read(path, limit: DiscoveryJobFile.maximumSize), path) } catch let error as BoundedFile.ReadError {
                throw LuaArgumentError(1, "job file \(path): \(error.problem)")
            }
        case .table(let list):
            guard list.fields.isEmpty, !list.array.isEmpty else {
                throw LuaArgumentError(1, "expected a job file's name or a list of wallet tables, e.g. {{id = \"a\", xpub = \"zpub…\"}}")
            }
            var text = ""
            for (n, item) in list.array.enumerated() {
                guard case .table = item, let record = Record(lua: item), case .object = record else {
                    throw LuaArgumentError(1, "wallet #\(n + 1) must be a table of the job file's keys (id, xpub, descriptor, mnemonic_env, …), got \(item.typeName)")
                }
                text += record.json(pretty: false) + "\n"
            }
            return (Array(text.utf8), "wallets")
        default:
            throw LuaArgumentError(1, "expected a job file's name or a list of wallet tables, got \(ctx.typeName(1))")
        }
    }
}
