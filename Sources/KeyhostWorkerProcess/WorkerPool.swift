import Dispatch
import KeyhostTokens
import Synchronization

/// Warm workers shared by threads that re-run programs to verify transfers (a ledger taking many
/// deposits at once). A run takes an idle worker, or starts one while fewer than `maxWorkers`
/// exist, and waits otherwise; each worker serves `runsPerWorker` runs and is replaced sooner
/// after a failed or bytecode run (`WorkerRunner`). Warm workers rather than fork servers here:
/// a ledger's limit is CPU per deposit, and a forked child costs about 0.7 ms more CPU per run
/// than a run in a warm worker (its page faults); each run still has a fresh Lua state in a
/// process apart from the ledger, and no run follows a failed or bytecode one in its process.
public final class WorkerPool: Sendable {
    public let executable: String
    public let arguments: [String]
    public let maxWorkers: Int
    private let idle = Mutex<[WorkerRunner]>([])
    /// The runners lent out now.
    private let busy = Mutex<[ObjectIdentifier: WorkerRunner]>([:])
    private let slots: DispatchSemaphore
    private let runsPerWorker: Int

    public init(executable: String, arguments: [String] = ["token", "_worker"], maxWorkers: Int = 4, runsPerWorker: Int = 1000) {
        self.executable = executable
        self.arguments = arguments
        self.maxWorkers = max(1, maxWorkers)
        self.runsPerWorker = runsPerWorker
        slots = DispatchSemaphore(value: self.maxWorkers)
    }

    public func run(_ request: RunRequest) -> RunOutcome { withRunner { $0.run(request) } }

    /// Several links' runs in one exchange with one worker (`WorkerRunner.runLinks`).
    public func runLinks(_ request: LinkRunsRequest) -> [RunOutcome] { withRunner { $0.runLinks(request) } }

    private func withRunner<T>(_ body: (WorkerRunner) -> T) -> T {
        slots.wait()
        defer { slots.signal() }
        let runner = idle.withLock { $0.popLast() }
            ?? WorkerRunner(executable: executable, arguments: arguments, runsPerWorker: runsPerWorker)
        runner.progress.note()
        busy.withLock { $0[ObjectIdentifier(runner)] = runner }
        let result = body(runner)
        busy.withLock { $0[ObjectIdentifier(runner)] = nil }
        idle.withLock { $0.append(runner) }
        return result
    }

    /// How the pool stands, for a service's health check.
    public struct Health: Sendable, Equatable {
        /// Workers the pool may have, and how many of those are not running anything now.
        public let workers: Int, free: Int
        /// Every worker is busy and none has answered for longer than one run may take: new runs would wait
        /// on workers that are not moving.
        public let stuck: Bool

        public init(workers: Int, free: Int, stuck: Bool) {
            self.workers = workers
            self.free = free
            self.stuck = stuck
        }
    }

    /// The pool now. `stuckAfter`: the longest one run may take with its grace (a run that takes longer is
    /// killed by its runner, so a worker silent for longer is stuck, not slow).
    public func health(stuckAfter seconds: Double = Double(RunLimits.walletDefault.timeMillis) / 1000 + 3) -> Health {
        let running = busy.withLock { Array($0.values) }
        let free = max(0, maxWorkers - running.count)
        let stuck = free == 0 && running.allSatisfy { $0.progress.idleSeconds > seconds }
        return Health(workers: maxWorkers, free: free, stuck: stuck)
    }
}
