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
        if source.lowercased().hasPrefix("lua:") {
            throw ValidationError("a lua: source cannot serve a job's wallets at once; use index:, esplora:, electrum:, eth-rpc: or etherscan")
        }
        guard walletsAtOnce >= 1 else { throw ValidationError("--wallets-at-once must be at least 1, got \(walletsAtOnce)") }
    }

    func runJob(_ path: String, http: HTTPOptions) throws {
        let bytes: [UInt8]
        do {
            bytes = path == "-" ? try BoundedFile.readStandardInput(limit: DiscoveryJobFile.maximumSize)
                : try BoundedFile.read(path, limit: DiscoveryJobFile.maximumSize)
        } catch let error as BoundedFile.ReadError {
            throw Failure.message("--jobs \(path): \(error.problem)")
        }
        var defaults = DiscoveryJobDefaults()
        defaults.coin = coin.map { Coin.named($0) ?? UInt32($0).flatMap(Coin.withSLIP44) ?? .bitcoin }
        defaults.purpose = purpose
        defaults.kind = kind.flatMap(AddressKind.init(name:))
        defaults.scheme = scheme
        defaults.template = template
        defaults.gapLimit = gapLimit
        defaults.changeGapLimit = changeGapLimit
        defaults.accountGap = accountGap
        defaults.accounts = try accounts.map { try Self.range($0, "--accounts") }
        defaults.indexes = try indexes.map { try Self.range($0, "--indexes") }
        defaults.maxAddresses = maxAddresses

        let base = try proxyOptions.unisolated()
        let sources = SharedUsageSources(spec: source, http: http, isolating: proxyOptions.proxyIsolate ? base : nil,
                                         electrum: electrumOptions, etherscanKeyVariable: etherscanKeyEnv) { inner in
            ClosureUsageSource(name: inner.name) { addresses in
                if Interrupt.requested { throw Failure.message("interrupted") }
                return try inner.usage(of: addresses)
            }
        }
        let wallets: [JobWallet]
        do {
            wallets = try DiscoveryJobFile.wallets(bytes, name: path == "-" ? "standard input" : path, defaults: defaults,
                                                   usage: sources.source(for:wallet:))
        } catch let error as DiscoverySetupError {
            throw ValidationError(error.description)
        }
        let jobCheckpoint = try checkpoint.map { try JobCheckpoint(path: $0, source: source) }
        let job = try DiscoveryJob(wallets: wallets, concurrency: walletsAtOnce, checkpoint: jobCheckpoint)

        let progress = !quiet && isatty(STDERR_FILENO) != 0
        var finished = 0, resumed = 0, failed = 0
        if csv { print("wallet,status,account,chain,index,path,address,account_xpub,error") }
        Interrupt.install()
        try job.run(stop: { Interrupt.requested }) { index, wallet, outcome in
            // The id is the job file's text: shown to people with its control characters escaped (JSON escapes its own).
            let id = TerminalText.escaped(wallet.id)
            switch outcome {
            case .finished(let result, let fromCheckpoint):
                finished += 1
                if fromCheckpoint { resumed += 1 }
                if json {
                    print(Record.object([("id", .string(wallet.id)), ("ok", .bool(true)), ("resumed", .bool(fromCheckpoint)),
                                         ("result", result.record)]).json(pretty: false))
                } else if csv {
                    print(Self.csvRows(id, result), terminator: "")
                } else {
                    print(Self.summary(id, result))
                }
            case .failed(let error):
                failed += 1
                if json {
                    print(Record.object([("id", .string(wallet.id)), ("ok", .bool(false)),
                                         ("error", ErrorJSON.record(for: error)["error"] ?? .null)]).json(pretty: false))
                } else if csv {
                    print([id, "error", "", "", "", "", "", "", TerminalText.escaped("\(error)")].map(DiscoveryResult.csvField).joined(separator: ","))
                } else {
                    print("\(id)\tFAILED\t\(TerminalText.escaped("\(error)", keepingLineBreaks: true))")
                }
            }
            fflush(stdout)
            if progress { fputs("[\(index + 1)/\(wallets.count)] \(id): \(Self.state(outcome))\n", stderr) }
        }
        let kept = checkpoint.map { " (the checkpoint \($0) keeps the finished wallets)" } ?? ""
        if Interrupt.requested {
            Failure.report(Failure.message("interrupted after \(finished + failed) of \(wallets.count) wallets\(kept); rerun the same command to go on"))
            throw ExitCode(130)
        }
        if !quiet {
            fputs("job: \(wallets.count) wallets, \(finished) finished (\(resumed) from the checkpoint), \(failed) failed\n", stderr)
        }
        if failed > 0 { throw ExitCode(1) }
    }

    private static func state(_ outcome: JobOutcome) -> String {
        switch outcome {
        case .finished(let result, let resumed): return "\(result.usedAddresses.count) used addresses\(resumed ? " (from the checkpoint)" : "")"
        case .failed: return "failed"
        }
    }

    /// One line per wallet: its accounts in use, used addresses and the last used indexes.
    static func summary(_ id: String, _ result: DiscoveryResult) -> String {
        let used = result.usedAccounts
        let accounts = used.map { account in
            "\(account.account.map { "account \($0)" } ?? "wallet"): receive \(account.lastUsedReceiveIndex.map(String.init) ?? "-"), "
                + "change \(account.lastUsedChangeIndex.map(String.init) ?? "-")"
        }
        return "\(id)\tok\t\(result.usedAddresses.count) used addresses\t" + (accounts.isEmpty ? "unused" : accounts.joined(separator: "; "))
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
