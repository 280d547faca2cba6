import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// When a runner last started a run or heard an answer from its worker, readable from any thread: a
/// pool whose every worker is busy is stuck only when none of them has made progress for longer than
/// one run may take (`WorkerPool.health`).
final class WorkerProgress: Sendable {
    private let last = Atomic<Int64>(WorkerProgress.now())

    /// Records progress now.
    func note() { last.store(Self.now(), ordering: .relaxed) }

    /// Seconds since the last progress.
    var idleSeconds: Double { Double(Self.now() - last.load(ordering: .relaxed)) / 1e9 }

    private static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
