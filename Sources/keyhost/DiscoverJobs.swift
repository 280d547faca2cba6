import ArgumentParser
import KeyhostCrypto
import KeyhostDiscovery
import KeyhostFiles
import KeyhostHTTP
import KeyhostRecord
import KeyhostServices
#if canImport(Glibc)
import Glibc
#endif

/// `keyhost discover --jobs FILE`: many wallets in one run, sharing one usage source (one connection pool, one
/// `--rate`), `--wallets-at-once` at a time, one `--checkpoint` for the whole job, one report (docs/discovery-jobs.md).
extension Discover {
    /// The command-line options that are one wallet's, which a job takes from its file instead.
    var walletOnlyOptions: [String] {
        [xpub.map { _ in "--xpub" }, descriptor.isEmpty ? nil : "--descriptor", mnemonicEnv.map { _ in "--mnemonic-env" },
         passphraseEnv.map { _ in "--passphrase-env" }, card.map { _ in "--card" }].compactMap { $0 }
    }

    func validateJob() throws {
        if let first = walletOnlyOptions.first {
            throw ValidationError("\(first) does not go with --jobs: each wallet's keys are on its line of the job file")
        }
    }

    func runJob(_ path: String, http: HTTPOptions) throws {
        let bytes: [UInt8]
        do {
            bytes = path == "-" ? try BoundedFile.readStandardInput(limit: DiscoveryJobFile.maximumSize)
                : try BoundedFile.read(path, limit: DiscoveryJobFile.maximumSize)
        } catch let error as BoundedFile.ReadError {
            throw Failure.message("--jobs \(path): \(error.problem)")
        }
        // The options as typed values; checking them and the defaults are the request's (shared with Lua).
        var request = DiscoveryJobRequest(source: source)
        request.coin = coin.map { Coin.named($0) ?? UInt32($0).flatMap(Coin.withSLIP44) ?? .bitcoin }
        request.purpose = purpose
        request.kind = kind.flatMap(AddressKind.init(name:))
        request.scheme = scheme
        request.template = template
        request.gapLimit = gapLimit
        request.changeGapLimit = changeGapLimit
        request.accountGap = accountGap
        request.accounts = try accounts.map { try Self.range($0, "--accounts") }
        request.indexes = try indexes.map { try Self.range($0, "--indexes") }
        request.maxAddresses = maxAddresses
        request.walletsAtOnce = walletsAtOnce
        request.checkpoint = checkpoint
        request.http = http
        request.isolatingProxy = try proxyOptions.proxyIsolate ? proxyOptions.unisolated() : nil
        request.electrum = electrumOptions
        request.etherscanKeyVariable = etherscanKeyEnv
        let job: DiscoveryJob
        do {
            job = try request.job(lines: bytes, name: path == "-" ? "standard input" : path) { "--" + $0.replacing("_", with: "-") }
        } catch let error as DiscoverySetupError {
            throw ValidationError(error.description)
        }
        let count = job.wallets.count

        let progress = !quiet && isatty(STDERR_FILENO) != 0
        var finished = 0, resumed = 0, failed = 0, interrupted = 0
        if csv { print("wallet,status,account,chain,index,path,address,account_xpub,error") }
        // Ctrl-C: no further wallet starts, and the running ones stop after their current request (interrupted).
        var stopped = false
        try Interruption.whileRunning {
            defer { stopped = Interruption.isRequested }
            try job.run(stop: { Interruption.isRequested }) { index, wallet, outcome in
                switch outcome {
                case .finished(_, let fromCheckpoint):
                    finished += 1
                    if fromCheckpoint { resumed += 1 }
                case .failed: failed += 1
                case .interrupted: interrupted += 1
                }
                if json {
                    print(DiscoveryJobReport.record(wallet, outcome).json(pretty: false))
                } else {
                    print(Self.reportText(wallet.id, outcome, csv: csv), terminator: "")
                }
                fflush(stdout)
                // The id is the job file's text: shown to people with its control characters escaped (JSON escapes its own).
                if progress { fputs("[\(index + 1)/\(count)] \(TerminalText.escaped(wallet.id)): \(Self.state(outcome))\n", stderr) }
            }
        }
        if stopped {
            let kept = checkpoint.map { "; the checkpoint \($0) keeps the finished ones" } ?? ""
            Failure.report(Failure.message("interrupted: \(finished) of \(count) wallets finished, \(failed) failed, \(interrupted) stopped while running"
                + "\(kept); rerun the same command to go on"))
            throw ExitCode(130)
        }
        if !quiet {
            fputs("job: \(count) wallets, \(finished) finished (\(resumed) from the checkpoint), \(failed) failed\n", stderr)
        }
        if failed > 0 { throw ExitCode(1) }
    }

    /// A wallet's entry in the text or CSV report.
    private static func reportText(_ rawID: String, _ outcome: JobOutcome, csv: Bool) -> String {
        let id = TerminalText.escaped(rawID)
        switch outcome {
        case .finished(let result, _):
            return csv ? csvRows(id, result) : summary(id, result) + "\n"
        case .failed(let error):
            let message = TerminalText.escaped("\(error)", keepingLineBreaks: !csv)
            return csv ? csvRow([id, "error", "", "", "", "", "", "", message]) : "\(id)\tFAILED\t\(message)\n"
        case .interrupted:
            return csv ? csvRow([id, "interrupted", "", "", "", "", "", "", DiscoveryJobReport.interruptedMessage])
                : "\(id)\tINTERRUPTED\t\(DiscoveryJobReport.interruptedMessage)\n"
        }
    }

    private static func csvRow(_ fields: [String]) -> String {
        fields.map(DiscoveryResult.csvField).joined(separator: ",") + "\n"
    }

    private static func state(_ outcome: JobOutcome) -> String {
        switch outcome {
        case .finished(let result, let resumed): return usedAddresses(result.usedAddresses.count) + (resumed ? " (from the checkpoint)" : "")
        case .failed: return "failed"
        case .interrupted: return "interrupted"
        }
    }

    /// "1 used address", "3 used addresses".
    static func usedAddresses(_ count: Int) -> String { "\(count) used address\(count == 1 ? "" : "es")" }

    /// One line per wallet: its accounts in use, used addresses and the last used indexes.
    static func summary(_ id: String, _ result: DiscoveryResult) -> String {
        let used = result.usedAccounts
        let accounts = used.map { account in
            "\(account.account.map { "account \($0)" } ?? "wallet"): receive \(account.lastUsedReceiveIndex.map(String.init) ?? "-"), "
                + "change \(account.lastUsedChangeIndex.map(String.init) ?? "-")"
        }
        return "\(id)\tok\t\(usedAddresses(result.usedAddresses.count))\t" + (accounts.isEmpty ? "unused" : accounts.joined(separator: "; "))
    }

    /// The wallet's CSV rows: one per used address, or one without an address when it has none.
    static func csvRows(_ id: String, _ result: DiscoveryResult) -> String {
        var rows = [String]()
        for account in result.accounts {
            for used in account.usedAddresses {
                rows.append([id, "ok", account.account.map(String.init) ?? "", used.chain == 0 ? "receive" : "change", String(used.index),
                             used.path, used.address, account.extendedPublicKey ?? "", ""].map(DiscoveryResult.csvField).joined(separator: ","))
            }
        }
        if rows.isEmpty { rows.append([id, "ok", "", "", "", "", "", "", ""].map(DiscoveryResult.csvField).joined(separator: ",")) }
        return rows.joined(separator: "\n") + "\n"
    }
}
