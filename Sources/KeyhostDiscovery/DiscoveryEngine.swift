// Date from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCrypto

/// BIP44 account discovery: for each account, scan the receive chain and the change chain until each has
/// `gap` consecutive unused addresses; go on to the next account until `accountGapLimit` consecutive accounts
/// are empty.
///
/// Work per account: one key from the key source, addresses derived locally in batches over all cores, usage
/// asked in batches of at most `batchSize`, never further than the gap requires. Each address is derived and
/// asked about once, so very large gap limits cost time linear in the limit.
public final class DiscoveryEngine {
    public let scheme: DiscoveryScheme
    public let keys: AccountKeySource
    public let usage: UsageSource
    public let options: DiscoveryOptions
    /// Set when the wallet is given as descriptors (`init(descriptors:…)`): its addresses come from them.
    public let descriptorWallet: DescriptorWallet?
    /// Called after every batch.
    public var progress: ((DiscoveryProgress) -> Void)?
    /// When set, usage answers are kept in this JSON file and reused on the next run with the same parameters.
    public var checkpointPath: String?

    // Per-run state.
    private var checkpoint: DiscoveryCheckpoint?
    private var chainKeys: [DerivationPath: HDNode] = [:]
    private var accountsDone = 0
    private var checked = 0
    private var queried = 0
    private var fromCheckpoint = 0
    private var usedFound = 0
    private var started = Date()
    private var currentAccount: UInt32?

    public init(scheme: DiscoveryScheme, keys: AccountKeySource, usage: UsageSource, options: DiscoveryOptions = DiscoveryOptions()) {
        self.scheme = scheme
        self.keys = keys
        self.usage = usage
        self.options = options
        descriptorWallet = nil
    }

    /// A job over a wallet given as output descriptors: one account, its receive chain and, when given, its change chain.
    public init(descriptors wallet: DescriptorWallet, usage: UsageSource, options: DiscoveryOptions = DiscoveryOptions()) throws {
        scheme = try wallet.scheme
        keys = wallet
        self.usage = usage
        self.options = options
        descriptorWallet = wallet
    }

    /// The parameters a checkpoint of this job records.
    public var checkpointParameters: CheckpointParameters {
        CheckpointParameters(scheme: scheme.description, keyIdentity: keys.identity, usageSource: usage.name,
                             receiveGapLimit: options.receiveGapLimit, changeGapLimit: options.changeGapLimit,
                             accountGapLimit: options.accountGapLimit,
                             accounts: "\(options.accounts.lowerBound)-\(options.accounts.upperBound)",
                             indexes: "\(options.indexes.lowerBound)-\(options.indexes.upperBound)")
    }

    /// Runs the job. On failure the checkpoint (if any) holds every answer received, so a rerun resumes.
    public func run() throws -> DiscoveryResult {
        try options.validate()
        resetState()
        let template = scheme.template
        var notes = [String]()

        // Which accounts: an xpub pins one; a template without {account} has one; otherwise scan with the account gap.
        var pinnedAccount: UInt32?? = nil  // .some(nil): a single account with no number
        if let fixed = keys.fixedKey {
            pinnedAccount = .some(try accountOfFixedKey(fixed))
            notes.append("the key source is a single \(fixed.family.publicPrefix): only "
                + (pinnedAccount!.map { "account \($0)" } ?? "its account") + " was scanned; other accounts need the seed or the card")
        } else if !template.hasAccount {
            pinnedAccount = .some(nil)
        }
        if template.keyPerIndex && keys is CardKeySource {
            notes.append("the scheme hardens {index}, so the card exported one key per index")
        }

        if let checkpointPath {
            let loaded = try DiscoveryCheckpoint(path: checkpointPath, parameters: checkpointParameters)
            if loaded.refreshed > 0 {
                notes.append("the checkpoint \(checkpointPath) held a finished scan: its \(loaded.loadedCount) used address(es) were taken "
                    + "from it, the \(loaded.refreshed) it had found unused were asked again")
            }
            checkpoint = loaded
        }
        do {
            var reports = [AccountReport]()
            if let pinned = pinnedAccount {
                reports.append(try scanAccount(pinned))
                accountsDone += 1
            } else {
                var account = UInt64(options.accounts.lowerBound)
                var emptyRun = 0
                while emptyRun < options.accountGapLimit && account <= UInt64(options.accounts.upperBound) {
                    let report = try scanAccount(UInt32(account))
                    reports.append(report)
                    accountsDone += 1
                    emptyRun = report.isUsed ? 0 : emptyRun + 1
                    account += 1
                }
                if emptyRun < options.accountGapLimit {
                    notes.append("the account range ended at \(options.accounts.upperBound) before \(options.accountGapLimit) "
                        + "consecutive empty account(s) were seen; accounts beyond it were not scanned")
                }
            }
            for report in reports where !report.gapReached {
                notes.append("account \(report.account.map(String.init) ?? report.keyPath): the index range ended at "
                    + "\(options.indexes.upperBound) before the gap limit was reached; more used addresses may lie beyond")
            }
            try checkpoint?.save(complete: true, force: true)
            reportProgress()
            if keys.fixedKey != nil, reports.contains(where: { $0.descriptors != nil }), try keys.masterFingerprint() == nil {
                notes.append("the \(keys.fixedKey!.family.publicPrefix) does not say which master key it comes from, so the descriptors have no "
                    + "origin [fingerprint/path]; add it by hand, or run from the mnemonic or the card")
            }
            return DiscoveryResult(
                scheme: scheme.name, template: descriptorWallet?.chains[0].description ?? template.description, coin: scheme.coin.symbol,
                addressKind: descriptorWallet?.form ?? scheme.kind.rawValue,
                keySource: keys.label, usageSource: usage.name,
                receiveGapLimit: options.receiveGapLimit, changeGapLimit: options.changeGapLimit, accountGapLimit: options.accountGapLimit,
                accounts: reports,
                totals: Totals(accountsScanned: reports.count, accountsUsed: reports.filter(\.isUsed).count, addressesChecked: checked,
                               usedAddresses: usedFound, addressesQueried: queried, addressesFromCheckpoint: fromCheckpoint),
                notes: notes)
        } catch {
            // Keep what was learnt; a failure to save must not hide the original error.
            try? checkpoint?.save(force: true)
            throw error
        }
    }

    private func resetState() {
        chainKeys = [:]
        accountsDone = 0
        checked = 0
        queried = 0
        fromCheckpoint = 0
        usedFound = 0
        started = Date()
        currentAccount = nil
        checkpoint = nil
    }

    /// The account number an account-level xpub stands for, after checking it fits the scheme.
    private func accountOfFixedKey(_ fixed: FixedAccountKey) throws -> UInt32? {
        let template = scheme.template
        let pattern = template.keyPathPattern
        guard !template.keyPerIndex else {
            throw DiscoveryError.keySource(path: pattern, detail: "this scheme hardens {index}, so every index needs its own key; "
                + "a single \(fixed.family.publicPrefix) cannot serve it: use the seed or the card")
        }
        // A ypub/zpub says which address kind it is for; scanning it as another kind would find nothing.
        if fixed.family.kind != .p2pkh && fixed.family.kind != scheme.kind {
            throw DiscoveryError.keySource(path: pattern, detail: "a \(fixed.family.publicPrefix) is for \(fixed.family.kind.rawValue) addresses, "
                + "but the scheme derives \(scheme.kind.rawValue); choose the matching scheme")
        }
        guard Int(fixed.node.depth) == template.keyPathLength else {
            throw DiscoveryError.keySource(path: pattern, detail: "the \(fixed.family.publicPrefix) is at depth \(fixed.node.depth), "
                + "but the scheme's account key \(pattern) is at depth \(template.keyPathLength); give the account-level key")
        }
        guard template.hasAccount else { return nil }
        let keyComponents = template.components.prefix(template.keyPathLength)
        guard let position = keyComponents.firstIndex(where: { if case .account = $0 { return true } else { return false } }) else {
            return nil  // {account} after the key: the one key covers every account
        }
        guard position == template.keyPathLength - 1, case .account(let hardened) = keyComponents[position] else {
            throw DiscoveryError.keySource(path: pattern, detail: "{account} is not the last component of the key path, "
                + "so the \(fixed.family.publicPrefix) does not say which account it is")
        }
        let child = fixed.node.childNumber
        guard hardened == (child >= DerivationPath.hardenedOffset) else {
            throw DiscoveryError.keySource(path: pattern, detail: "the \(fixed.family.publicPrefix) is child "
                + "\(DerivationPath.format(child)), but the scheme's account is \(hardened ? "hardened" : "not hardened")")
        }
        return child & ~DerivationPath.hardenedOffset
    }

    // MARK: - Scanning

    private func scanAccount(_ account: UInt32?) throws -> AccountReport {
        currentAccount = account
        let template = scheme.template
        let number = account ?? 0
        let keyPathText = template.keyPerIndex ? template.keyPathPattern.replacing("{account}", with: String(number))
            : try template.keyPath(account: number).description
        var xpub: String?
        var descriptors: [String]?
        if let wallet = descriptorWallet {
            descriptors = wallet.chains.map(\.description)
        } else if !template.keyPerIndex && !template.keyPerChain {
            let family = keys.fixedKey?.family ?? scheme.coin.extendedKeyVersion(for: scheme.kind)
            let path = try template.keyPath(account: number)
            let key = try accountKey(path)
            xpub = key.extendedPublicKey(family)
            descriptors = scheme.descriptors(key: key, keyPath: path, masterFingerprint: try masterFingerprint())
        }
        let receive = try scanChain(account: number, change: 0, gap: options.receiveGapLimit)
        let change = template.hasChange ? try scanChain(account: number, change: 1, gap: options.changeGapLimit)
            : ChainScan(used: [], checked: 0, gapReached: true)
        let used = receive.used + change.used
        return AccountReport(account: account, keyPath: descriptorWallet?.accountPath ?? keyPathText, extendedPublicKey: xpub, usedAddresses: used,
                             lastUsedReceiveIndex: receive.used.last?.index, lastUsedChangeIndex: change.used.last?.index,
                             receiveAddressesChecked: receive.checked, changeAddressesChecked: change.checked,
                             gapReached: receive.gapReached && change.gapReached, isUsed: !used.isEmpty, descriptors: descriptors)
    }

    private struct ChainScan {
        var used: [UsedAddress]
        var checked: Int
        var gapReached: Bool
    }

    /// Walks one chain from the start of the index range until `gap` consecutive addresses are unused.
    /// Each batch asks for exactly as many addresses as could still end the gap, so nothing past it is queried.
    private func scanChain(account: UInt32, change: UInt32, gap: Int) throws -> ChainScan {
        var index = UInt64(options.indexes.lowerBound)
        let end = UInt64(options.indexes.upperBound) + 1
        var unusedRun = 0
        var scan = ChainScan(used: [], checked: 0, gapReached: false)
        while unusedRun < gap && index < end {
            // Ctrl-C in the REPL or a script stops the scan between batches (the batch's derivation checks too).
            try Interruption.check()
            guard checked < options.maxAddresses else { throw DiscoveryError.addressCapReached(limit: options.maxAddresses) }
            let wanted = min(gap - unusedRun, options.batchSize, options.maxAddresses - checked)
            let count = Int(min(UInt64(wanted), end - index))
            let addresses = try deriveAddresses(account: account, change: change, from: UInt32(index), count: count)
            let flags = try lookUp(addresses)
            for (offset, isUsed) in flags.enumerated() {
                if isUsed {
                    let i = UInt32(index) + UInt32(offset)
                    let path = try descriptorWallet?.path(chain: change, index: i) ?? scheme.template.path(account: account, change: change, index: i).description
                    scan.used.append(UsedAddress(address: addresses[offset], chain: change, index: i, path: path))
                    usedFound += 1
                    unusedRun = 0
                } else {
                    unusedRun += 1
                }
            }
            index += UInt64(count)
            scan.checked += count
            checked += count
            reportProgress()
        }
        scan.gapReached = unusedRun >= gap
        return scan
    }

    /// The key source's master fingerprint, for descriptors' origins; a source that fails to tell gives none.
    private func masterFingerprint() throws -> UInt32? {
        do { return try keys.masterFingerprint() } catch let error as InterruptedError { throw error } catch { return nil }
    }

    /// The (cached) key at a concrete key path.
    private func accountKey(_ path: DerivationPath) throws -> HDNode {
        if let node = chainKeys[path] { return node }
        let node: HDNode
        do {
            node = try keys.extendedPublicKey(at: path)
        } catch let error as DiscoveryError {
            throw error
        } catch {
            throw DiscoveryError.keySourceFailed(path: path.description, underlying: String(describing: error))
        }
        chainKeys[path] = node
        return node
    }

    /// Addresses `from ..< from + count` of one chain.
    private func deriveAddresses(account: UInt32, change: UInt32, from: UInt32, count: Int) throws -> [String] {
        if let wallet = descriptorWallet {
            do { return try wallet.addresses(chain: change, from: from, count: count) } catch let error as InterruptedError { throw error } catch {
                throw DiscoveryError.derivation(path: "\(change == 0 ? "receive" : "change") descriptor \(from)…", underlying: String(describing: error))
            }
        }
        let template = scheme.template
        let (kind, coin) = (scheme.kind, scheme.coin)
        func wrap<T>(_ path: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
            do { return try body() } catch let error as DiscoveryError { throw error } catch {
                throw DiscoveryError.derivation(path: path(), underlying: String(describing: error))
            }
        }
        if template.keyPerIndex {
            // One key per index (the scheme leaves no other way); the rest is derived locally.
            return try (0..<count).map { offset in
                let i = from + UInt32(offset)
                let key = try accountKey(try template.keyPath(account: account, change: change, index: i))
                return try wrap(pathText(account, change, i)) {
                    try key.derive(template.relativePath(account: account, change: change, index: i)).address(kind, coin: coin)
                }
            }
        }
        let key = try accountKey(try template.keyPath(account: account, change: change))
        if template.isBatchable {
            // The parent of {index}: derive it once per chain, then the children in one multi-core batch.
            let relative = try template.relativePath(account: account, change: change, index: 0)
            let parentPath = try DerivationPath(indexes: Array(relative.indexes.dropLast()), absolute: false)
            let cacheKey = try template.keyPath(account: account, change: change).appending(parentPath)
            let parent: HDNode
            if let cached = chainKeys[cacheKey] { parent = cached } else {
                parent = try wrap(cacheKey.description) { try key.derive(parentPath) }
                chainKeys[cacheKey] = parent
            }
            return try wrap("\(cacheKey)/\(from)..\(UInt64(from) + UInt64(count) - 1)") {
                try parent.addresses(kind, coin: coin, from: from, count: count)
            }
        }
        // {index} followed by fixed components: derive each address on its own.
        return try (0..<count).map { offset in
            let i = from + UInt32(offset)
            return try wrap(pathText(account, change, i)) {
                try key.derive(template.relativePath(account: account, change: change, index: i)).address(kind, coin: coin)
            }
        }
    }

    /// Usage of `addresses`: from the checkpoint where known, from the usage source for the rest.
    private func lookUp(_ addresses: [String]) throws -> [Bool] {
        var flags = [Bool?](repeating: nil, count: addresses.count)
        var unknown = [Int]()
        for (i, address) in addresses.enumerated() {
            if let known = checkpoint?.usage(of: address) { flags[i] = known } else { unknown.append(i) }
        }
        fromCheckpoint += addresses.count - unknown.count
        if !unknown.isEmpty {
            let asked = unknown.map { addresses[$0] }
            let answers: [Bool]
            do {
                answers = try usage.usage(of: asked)
            } catch let error as DiscoveryError {
                throw error
            } catch let error as InterruptedError {
                throw error  // Ctrl-C, not the source's failure
            } catch {
                throw DiscoveryError.usageSourceFailed(source: usage.name, underlying: String(describing: error))
            }
            guard answers.count == asked.count else {
                throw DiscoveryError.usageCountMismatch(source: usage.name, asked: asked.count, answered: answers.count)
            }
            for (position, i) in unknown.enumerated() { flags[i] = answers[position] }
            queried += asked.count
            if let checkpoint {
                checkpoint.record(asked, answers)
                try checkpoint.save(interval: options.checkpointInterval)
            }
        }
        return flags.map { $0! }
    }

    /// A path for error messages; never fails (an unformattable path is already an error being reported).
    private func pathText(_ account: UInt32, _ change: UInt32, _ index: UInt32) -> String {
        (try? scheme.template.path(account: account, change: change, index: index).description) ?? scheme.template.description
    }

    private func reportProgress() {
        guard let progress else { return }
        progress(DiscoveryProgress(accountsDone: accountsDone, currentAccount: currentAccount, addressesChecked: checked,
                                   addressesQueried: queried, usedFound: usedFound, elapsed: Date().timeIntervalSince(started)))
    }
}
