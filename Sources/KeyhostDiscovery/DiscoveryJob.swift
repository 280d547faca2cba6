import Synchronization
import KeyhostCrypto
import KeyhostFiles

/// One wallet of a discovery job.
public struct JobWallet: Sendable {
    /// The name reports and the checkpoint use (unique in the job).
    public var id: String
    /// The wallet's settings as text: a checkpoint entry is reused only for a wallet whose settings are the same.
    public var settings: String
    /// Makes the wallet's engine, on the thread that scans it (a bad key or option fails this wallet alone).
    public var makeEngine: @Sendable () throws -> DiscoveryEngine

    public init(id: String, settings: String, makeEngine: @escaping @Sendable () throws -> DiscoveryEngine) {
        self.id = id
        self.settings = settings
        self.makeEngine = makeEngine
    }
}

/// How one wallet of a job ended. @unchecked for the error: made by the thread that scanned the wallet, then only
/// read, by whichever thread reports it.
public enum JobOutcome: @unchecked Sendable {
    /// Scanned now, or taken from the job's checkpoint (`resumed`) without asking the source again.
    case finished(DiscoveryResult, resumed: Bool)
    case failed(Error)
    /// Stopped by Ctrl-C while it ran: not a failure of the wallet or the source; a rerun scans it again.
    case interrupted
}

/// Many wallets scanned at once (an audit, a recovery service, a family's cards): `concurrency` wallets at a
/// time, their engines sharing whatever the caller made them share (one usage source: one connection pool and
/// one rate limit). A wallet that fails is reported and the others go on. With a checkpoint, each finished
/// wallet is recorded at once, and a job run again skips the wallets it finished, asking nothing about them.
public final class DiscoveryJob: Sendable {
    public let wallets: [JobWallet]
    public let concurrency: Int
    public let checkpoint: JobCheckpoint?

    public init(wallets: [JobWallet], concurrency: Int, checkpoint: JobCheckpoint?) throws {
        guard concurrency >= 1 else {
            throw DiscoveryError.invalidOption(name: "wallets at once", detail: "\(concurrency); it must be at least 1")
        }
        var seen = Set<String>()
        for wallet in wallets where !seen.insert(wallet.id).inserted {
            throw DiscoveryError.invalidOption(name: "job", detail: "two wallets are named \"\(wallet.id)\"; give each its own \"id\"")
        }
        self.wallets = wallets
        self.concurrency = concurrency
        self.checkpoint = checkpoint
    }

    /// Scans every wallet and calls `report` once per wallet, in the job's order, as soon as that wallet and all
    /// before it are done (from whichever thread finished last; calls never overlap). `stop` is asked before each
    /// wallet starts: once it says true, no further wallet starts. A running wallet that Ctrl-C stops (its engine
    /// throws `InterruptedError`) is reported `.interrupted`; the wallets never started are not reported. A checkpoint
    /// that cannot be written ends the job with that error after the running wallets finish.
    public func run(stop: @escaping @Sendable () -> Bool = { false },
                    report: @escaping @Sendable (Int, JobWallet, JobOutcome) -> Void) throws {
        let run = JobRun(job: self, stop: stop, report: report)
        let threads = (1..<min(concurrency, max(1, wallets.count))).map { _ in startThread { run.work() } }
        run.work()
        for thread in threads { thread.join() }
        if let error = run.checkpointError { throw error }
    }
}

/// One run of a job, shared by the threads that scan its wallets: which wallet is next, the outcomes so far and
/// how many of them have been reported, behind one lock; reports in order, behind another.
private final class JobRun: Sendable {
    private struct State {
        var next = 0
        var outcomes: [JobOutcome?]
        var reported = 0
        var checkpointError: Error?
    }

    private let job: DiscoveryJob
    private let stop: @Sendable () -> Bool
    private let report: @Sendable (Int, JobWallet, JobOutcome) -> Void
    private let state: Mutex<State>
    // Held while reporting, so reports never overlap and keep the job's order; a plain lock, since the
    // report may take long (it writes to a terminal or runs a Lua function).
    private let reportLock = ThreadLock()

    init(job: DiscoveryJob, stop: @escaping @Sendable () -> Bool, report: @escaping @Sendable (Int, JobWallet, JobOutcome) -> Void) {
        self.job = job
        self.stop = stop
        self.report = report
        state = Mutex(State(outcomes: Array(repeating: nil, count: job.wallets.count)))
    }

    var checkpointError: Error? { state.withLock { $0.checkpointError } }

    /// Reports every outcome that is ready, in order.
    private func flush() {
        reportLock.lock()
        defer { reportLock.unlock() }
        while true {
            let ready = state.withLock { state -> (Int, JobOutcome)? in
                guard state.reported < state.outcomes.count, let outcome = state.outcomes[state.reported] else { return nil }
                state.reported += 1
                return (state.reported - 1, outcome)
            }
            guard let (index, outcome) = ready else { return }
            report(index, job.wallets[index], outcome)
        }
    }

    /// Scans wallets until none is left to start (or `stop` says so, or a checkpoint could not be written).
    func work() {
        while true {
            let index = state.withLock { state -> Int? in
                guard state.checkpointError == nil, state.next < job.wallets.count, !stop() else { return nil }
                state.next += 1
                return state.next - 1
            }
            guard let index else { return }
            let wallet = job.wallets[index]
            let outcome: JobOutcome
            if let stored = job.checkpoint?.result(for: wallet) {
                outcome = .finished(stored, resumed: true)
            } else {
                do {
                    let result = try wallet.makeEngine().run()
                    outcome = .finished(result, resumed: false)
                    do { try job.checkpoint?.record(result, for: wallet) } catch {
                        state.withLock { $0.checkpointError = error }
                    }
                } catch is InterruptedError {
                    outcome = .interrupted
                } catch {
                    outcome = .failed(error)
                }
            }
            state.withLock { $0.outcomes[index] = outcome }
            flush()
        }
    }
}
