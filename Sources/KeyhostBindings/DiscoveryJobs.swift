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

        // The options as typed values; checking them and the defaults are the request's (shared with the CLI).
        guard let spec = try opts.string("source") else {
            throw LuaArgumentError(2, "option 'source' is missing: a job's wallets share one source (\(DiscoverySetup.sourceForms))")
        }
        var request = DiscoveryJobRequest(source: spec)
        request.coin = try opts.coin()
        request.kind = try opts.kind()
        if let purpose = try opts.integer("purpose") {
            guard let value = UInt32(exactly: purpose) else { throw LuaArgumentError(2, "option 'purpose' is \(purpose); use 44, 49, 84 or 86") }
            request.purpose = value
        }
        request.scheme = try opts.string("scheme")
        request.template = try opts.string("template")
        request.gapLimit = try opts.integer("gap_limit").map { Int(clamping: $0) }
        request.changeGapLimit = try opts.integer("change_gap_limit").map { Int(clamping: $0) }
        request.accountGap = try opts.integer("account_gap").map { Int(clamping: $0) }
        if opts.has("accounts") { request.accounts = try range(opts, "accounts") }
        if opts.has("indexes") { request.indexes = try range(opts, "indexes") }
        request.maxAddresses = try opts.integer("max_addresses").map { Int(clamping: $0) }
        request.walletsAtOnce = try opts.integer("wallets_at_once").map { Int(clamping: $0) }
        request.checkpoint = try opts.string("checkpoint")
        request.http = try httpOptions(opts, isolate: false)
        request.isolatingProxy = try (opts.boolean("proxy_isolate") ?? false) ? opts.proxies(isolate: nil) : nil
        request.electrum = try electrumOptions(opts)
        request.etherscanKeyVariable = try opts.string("api_key_env")
        request.chainID = try opts.integer("chain_id").map { Int(clamping: $0) }
        let job: DiscoveryJob
        do {
            job = try request.job(lines: bytes, name: name) { "option '\($0)'" }
        } catch let error as DiscoverySetupError {
            throw LuaArgumentError(error.description.hasPrefix("option '") ? 2 : 1, error.description)
        }
        // The wallets run on threads of their own. Ctrl-C (under `keyhost run`, `eval`, the REPL) stops starting
        // wallets and the running ones; the script then sees "interrupted" as for any call Ctrl-C stops.
        var rows = [Record]()
        try job.run(stop: { Interruption.isRequested }) { _, wallet, outcome in rows.append(DiscoveryJobReport.record(wallet, outcome)) }
        return LuaTable(array: rows.map { LuaValue(record: $0) })
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
