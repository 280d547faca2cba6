import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import KeyhostWorkerProcess
import Synchronization
import Testing

/// A verifier's inputs are the attacker's: a chain whose re-run fails with a message of any size never
/// stalls a ledger's workers, and a failure of the verifier's own machine (a worker killed, crashed or
/// out of wall-clock time) is never reported as the holder's forgery.
@Suite struct VerifierFailureTests {
    /// Fails with an error as long as the holder's arguments make it: `times` copies of `code`.
    static let loud = TokenProgram(kind: .luaSource, code: Array("local t = ... error('bad code ' .. string.rep(t.args.code, t.args.times))".utf8))

    /// A deposit link signed by hand whose re-run fails with an error of about `kib` KiB.
    static func loudDeposit(kib: Int) throws -> TokenChain {
        let arguments = CBORValue.map([
            CBORPair(.text("code"), .text(String(repeating: "x", count: 1024))), CBORPair(.text("times"), .unsigned(UInt64(kib))),
        ])
        return try TokenChain(token: try TransferRunTests.token(loud)).appending(
            to: Fixtures.depositKey(), time: Fixtures.now - 60, arguments: arguments, effects: [], sign: TransferRunTests.sign)
    }

    @Test(arguments: [70, 200, 16 << 10]) func aLongErrorIsRefusedAndTheLedgerGoesOn(kib: Int) async throws {
        let ledger = try await StoreTests.ledger("sqlite")
        defer { Task { await ledger.store.close() } }
        await #expect { try await ledger.deposit([try Self.loudDeposit(kib: kib)]) } throws: { error in
            guard let error = error as? LedgerError, error.kind == "unauthorised_transfer" else { return false }
            // 16 MiB may reach the run's memory cap first; the shorter ones come back cut.
            return kib > 1024 || error.message.contains("bytes, cut to the first")
        }
        #expect(try await ledger.deposit([try TransferRunTests.honest()]).map(\.name) == ["accepted"])
    }

    /// The attack of the issue: more 200 KiB-error deposits at once than the service has workers. Each is
    /// answered (400), none holds a worker, and an honest deposit beside them is accepted.
    @Test func longErrorsDoNotStallTheService() async throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let (server, base) = try Child.ledgerServer(db: "sqlite:" + db, issuers: [Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)])
        defer { server.kill(SIGTERM); _ = server.wait() }
        let attacks = try (0..<6).map { _ in try Self.loudDeposit(kib: 200).armored }
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for chain in attacks {
                group.addTask {
                    let (status, object) = try await HTTPTests.call(base, "POST", "/v1/deposit", body: HTTPTests.body([chain]))
                    return (status, HTTPTests.error(object).kind)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.allSatisfy { $0 == (400, "unauthorised_transfer") }, "\(answers)")
        // Stalled workers made it wait for the service's deadline and answer 503 `timeout`. (How soon it is
        // answered is the machine's speed: on an idle one, well within a second.)
        let (status, object) = try await HTTPTests.call(base, "POST", "/v1/deposit", body: HTTPTests.body([try TransferRunTests.honest().armored]))
        #expect(status == 200 && (object["results"] as? [[String: Any]])?.first?["result"] as? String == "accepted", "\(object)")
        let (healthStatus, health) = try await HTTPTests.call(base, "GET", "/v1/health")
        #expect(healthStatus == 200 && health["status"] as? String == "ok")
    }

    /// A run that failed on the verifier's machine is run once more; failing twice, it is the verifier's
    /// `verifier_unavailable`, never `unauthorised_transfer`. A program's own failure is not re-run.
    @Test func aMachineFailureIsRetriedOnceAndNeverCalledForgery() throws {
        let honest = try TransferRunTests.honest()
        let crashed = RunOutcome.failed(kind: "crashed", message: "the worker ended without an answer (killed by signal 9 (SIGKILL))")
        for failure in [crashed, .failed(kind: "time_limit", message: "the worker was stopped at the wall-clock deadline (5000 ms)")] {
            var calls = 0
            try TransferRuns.verify(honest, bytecodeAllowed: true) { request in
                calls += 1
                return calls == 1 ? [failure] : Fixtures.programs.runLinks(request)
            }
            #expect(calls == 2)
            calls = 0
            #expect { try TransferRuns.verify(honest, bytecodeAllowed: true) { _ in calls += 1; return [failure] } } throws: {
                ($0 as? TokenError)?.kind == "verifier_unavailable" && "\($0)".contains("not the chain's")
            }
            #expect(calls == 2)
        }
        var calls = 0
        #expect {
            try TransferRuns.verify(honest, bytecodeAllowed: true) { _ in calls += 1; return [.failed(kind: "program", message: "refused")] }
        } throws: { ($0 as? TokenError)?.kind == "unauthorised_transfer" }
        #expect(calls == 1)
    }

    /// Workers killed at random while honest chains are deposited: each deposit is accepted or answered
    /// `verifier_unavailable` (and accepted when sent again), never refused as forged.
    @Test func killedWorkersNeverMakeAnHonestChainForged() async throws {
        // The pool's workers run from a link of their own, so the killer finds them, and no other test's.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("killed-workers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let executable = dir.appendingPathComponent("keyhost").path
        try FileManager.default.createSymbolicLink(atPath: executable, withDestinationPath: Fixtures.worker)
        let pool = WorkerPool(executable: executable, maxWorkers: 2)
        let path = dir.appendingPathComponent("ledger.db").path
        let ledger = try TokenLedger(store: try SQLiteLedgerStore(path: path), issuers: [Fixtures.issuer.publicKey.xOnly], linkPrograms: pool.runLinks)
        defer { Task { await ledger.store.close() } }

        let killer = WorkerKiller(executable: executable)
        killer.start()
        var unavailable: [TokenChain] = []
        var round = 0
        while round < 40 || killer.kills < 5, round < 400 {
            round += 1
            let chain = try Fixtures.deposit(try Fixtures.token())
            do {
                #expect(try await ledger.deposit([chain]).map(\.name) == ["accepted"])
            } catch let error as LedgerError where error.kind == "verifier_unavailable" {
                unavailable.append(chain)
            }
        }
        killer.stop()
        #expect(killer.kills >= 5)
        for chain in unavailable {
            #expect(try await ledger.deposit([chain]).map(\.name) == ["accepted"])
        }
    }
}

extension VerifierFailureTests {
    /// Health says stuck only when every worker is busy and silent for longer than a run may take.
    @Test func aPoolWhoseWorkersAreAllSilentIsUnhealthy() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("silent-worker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("silent.sh").path
        try "#!/bin/sh\nexec sleep 30\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let pool = WorkerPool(executable: script, maxWorkers: 1)
        #expect(pool.health(stuckAfter: 0.5) == WorkerPool.Health(workers: 1, free: 1, stuck: false))
        let request = RunRequest(token: try TransferRunTests.token(TransferRunTests.recording), arguments: .map([]), now: Fixtures.now,
                                 limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 3000), bytecodeAllowed: false)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<RunOutcome?>(nil)
        Thread { outcome.withLock { $0 = pool.run(request) }; done.signal() }.start()
        var health = pool.health(stuckAfter: 0.5)
        let deadline = Date().addingTimeInterval(60)
        while !health.stuck, Date() < deadline {
            usleep(50_000)
            health = pool.health(stuckAfter: 0.5)
        }
        #expect(health == WorkerPool.Health(workers: 1, free: 0, stuck: true))
        done.wait()
        guard case .failed("time_limit", _)? = outcome.withLock({ $0 }) else { Issue.record("\(String(describing: outcome.withLock { $0 }))"); return }
        #expect(pool.health(stuckAfter: 0.5) == WorkerPool.Health(workers: 1, free: 1, stuck: false))
    }
}

/// Kills, at random moments, every process whose command line starts with `executable`.
final class WorkerKiller: @unchecked Sendable {
    let executable: String
    private let lock = NSLock()
    private var running = true
    private var count = 0
    private var thread: Thread?

    init(executable: String) { self.executable = executable }

    var kills: Int { lock.withLock { count } }

    func start() {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                usleep(UInt32.random(in: 2_000...30_000))
                for pid in workers() where kill(pid, SIGKILL) == 0 { lock.withLock { count += 1 } }
            }
        }
        self.thread = thread
        thread.start()
    }

    func stop() {
        lock.withLock { running = false }
        while thread?.isFinished == false { usleep(1000) }
    }

    private func workers() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name in
            guard let pid = pid_t(name), let line = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { return nil }
            let first = line.split(separator: 0, maxSplits: 1).first.map { String(decoding: $0, as: UTF8.self) }
            return first == executable ? pid : nil
        }
    }
}
