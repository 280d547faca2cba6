import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery

@Suite("Checkpoint and resume")
struct CheckpointTests {
    let scheme = try! DiscoveryScheme.bip(purpose: 84, coin: .bitcoin)
    let options = DiscoveryOptions(receiveGapLimit: 10, changeGapLimit: 6, accountGapLimit: 2, batchSize: 4)

    func wallet() throws -> [String] {
        try [TestWallet.bip84(account: 0, index: 3), TestWallet.bip84(account: 0, index: 12), TestWallet.bip84(account: 0, change: 1, index: 1),
             TestWallet.bip84(account: 2, index: 0)]
    }

    func engine(_ source: UsageSource, checkpoint: String?, options: DiscoveryOptions? = nil) throws -> DiscoveryEngine {
        let engine = DiscoveryEngine(scheme: scheme, keys: try TestWallet.keys(), usage: source, options: options ?? self.options)
        engine.checkpointPath = checkpoint
        return engine
    }

    @Test("An interrupted job resumes from the checkpoint, gives the same result, and asks nothing twice")
    func resume() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("job.checkpoint.json").path

        let reference = CountingSource(try wallet())
        let uninterrupted = try engine(reference, checkpoint: nil).run()
        #expect(uninterrupted.usedAccounts.map(\.account) == [0, 2])

        let first = CountingSource(try wallet())
        first.failOnCall = 8
        let error = discoveryError { _ = try engine(first, checkpoint: path).run() }
        guard case .usageSourceFailed = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(first.calls == 8 && first.asked.count > 0 && first.asked.count < reference.asked.count)
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let second = CountingSource(try wallet())
        let resumed = try engine(second, checkpoint: path).run()
        #expect(resumed.accounts == uninterrupted.accounts)
        #expect(resumed.totals.addressesChecked == uninterrupted.totals.addressesChecked)
        #expect(Set(second.asked).isDisjoint(with: first.asked), "known addresses are not queried again")
        #expect(second.asked.count + first.asked.count == reference.asked.count)
        #expect(resumed.totals.addressesFromCheckpoint == first.asked.count)
        #expect(resumed.totals.addressesQueried == second.asked.count)

        // The scan finished: a third run takes the used addresses from the checkpoint and asks the rest again,
        // since any of them may have been used since.
        let third = CountingSource(try wallet())
        let again = try engine(third, checkpoint: path).run()
        #expect(again.accounts == uninterrupted.accounts)
        #expect(Set(third.asked) == Set(reference.asked).subtracting(try wallet()))
        #expect(again.notes.contains { $0.contains("held a finished scan") })
        // No temporary files are left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["job.checkpoint.json"])
    }

    @Test("A finished scan run again a day later sees the transactions that came since")
    func finishedScanSeesNewUsage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("job.checkpoint.json").path
        let before = try engine(CountingSource(try wallet()), checkpoint: path).run()
        #expect(before.totals.usedAddresses == 4)

        // Since then: a payment to the next receive address of account 0, and a first one to account 1.
        let later = try wallet() + [TestWallet.bip84(account: 0, index: 20), TestWallet.bip84(account: 1, index: 2)]
        let source = CountingSource(later)
        let after = try engine(source, checkpoint: path).run()
        #expect(after.totals.usedAddresses == 6)
        #expect(after.usedAccounts.map(\.account) == [0, 1, 2])
        #expect(Set(source.asked).isDisjoint(with: try wallet()), "addresses known to be used are not asked again")
        #expect(after.totals.addressesFromCheckpoint == 4)
    }

    @Test("The checkpoint is written as batches complete, not only at the end")
    func writtenDuringTheRun() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cp.json").path
        var options = self.options
        options.checkpointInterval = 0
        let job = try engine(CountingSource(try wallet()), checkpoint: path, options: options)
        var seen = [Int]()
        job.progress = { progress in
            guard let data = FileManager.default.contents(atPath: path),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { seen.append(-1); return }
            let count = ((object["used"] as? [Any])?.count ?? 0) + ((object["unused"] as? [Any])?.count ?? 0)
            #expect(count == progress.addressesQueried)
            seen.append(count)
        }
        _ = try job.run()
        #expect(seen.count > 5 && !seen.contains(-1))
    }

    @Test("Resuming with other parameters is a clear error")
    func mismatch() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cp.json").path
        _ = try engine(CountingSource(try wallet()), checkpoint: path).run()
        var other = options
        other.receiveGapLimit = 30
        let error = discoveryError { _ = try engine(CountingSource(try wallet()), checkpoint: path, options: other).run() }
        #expect(error == .checkpointMismatch(path: path, differences: ["receive gap limit 10 in the checkpoint, 30 now"]))
        #expect(error?.description.contains("other parameters") == true)

        let otherKey = DiscoveryEngine(scheme: scheme, keys: try SeedKeySource(mnemonic: Mnemonic(phrase: TestWallet.phrase), passphrase: "x"),
                                       usage: CountingSource([]), options: options)
        otherKey.checkpointPath = path
        guard case .checkpointMismatch(_, let differences) = discoveryError({ _ = try otherKey.run() }) else { Issue.record("key change not caught"); return }
        #expect(differences.count == 1 && differences[0].hasPrefix("key seed:"))

        let otherSource = try engine(CountingSource(try wallet(), name: "another"), checkpoint: path)
        guard case .checkpointMismatch(_, let sourceDiff) = discoveryError({ _ = try otherSource.run() }) else { Issue.record("source change not caught"); return }
        #expect(sourceDiff == ["usage source counting in the checkpoint, another now"])
    }

    @Test("A corrupt or foreign checkpoint file is an error, never silently ignored")
    func corrupt() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cp.json").path
        try "{\"half\":".write(toFile: path, atomically: true, encoding: .utf8)
        guard case .checkpoint(let p, let detail) = discoveryError({ _ = try engine(CountingSource([]), checkpoint: path).run() }) else {
            Issue.record("corrupt checkpoint accepted"); return
        }
        #expect(p == path && detail.contains("not a keyhost discovery checkpoint"))
        let unwritable = dir.appendingPathComponent("missing-dir/cp.json").path
        guard case .checkpoint = discoveryError({ _ = try engine(CountingSource([]), checkpoint: unwritable).run() }) else {
            Issue.record("unwritable checkpoint accepted"); return
        }
    }
}

@Suite("Result renderings")
struct RenderingTests {
    func result() throws -> DiscoveryResult {
        let used = [try TestWallet.bip84(index: 0), try TestWallet.bip84(change: 1, index: 2)]
        return try DiscoveryEngine(scheme: try .bip(purpose: 84, coin: .bitcoin), keys: try TestWallet.keys(),
                                   usage: IndexFileUsageSource(addresses: used, name: "idx"), options: DiscoveryOptions(receiveGapLimit: 3, changeGapLimit: 3)).run()
    }

    /// The Codable form a job checkpoint keeps finished wallets' results in.
    @Test("JSON round-trips with stable field names")
    func json() throws {
        let result = try result()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(result), as: UTF8.self)
        #expect(try JSONDecoder().decode(DiscoveryResult.self, from: Data(text.utf8)) == result)
        for key in ["\"usedAddresses\"", "\"extendedPublicKey\"", "\"lastUsedChangeIndex\" : 2", "\"path\" : \"m/84'/0'/0'/1/2\"", "\"accountsUsed\" : 1"] {
            #expect(text.contains(key), "\(key)")
        }
    }

    @Test("CSV has one row per used address")
    func csv() throws {
        let lines = try result().csv().split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "account,chain,index,path,address,account_xpub")
        #expect(lines[1].hasPrefix("0,receive,0,m/84'/0'/0'/0/0,bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu,zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYY"))
        #expect(lines[2].hasPrefix("0,change,2,m/84'/0'/0'/1/2,"))
        #expect(DiscoveryResult.csvField("a,\"b\"") == "\"a,\"\"b\"\"\"")
    }

    @Test("The table lists accounts, addresses, totals and notes")
    func table() throws {
        var result = try result()
        result.notes = ["something to know"]
        let table = result.table()
        #expect(table.contains("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"))
        #expect(table.contains("(empty: 6 checked)"))
        #expect(table.contains("last used receive 0, change 2"))
        #expect(table.contains("totals: 1 of 2 accounts used, 2 used addresses"))
        #expect(table.contains("note: something to know"))
    }
}
