import Foundation
@testable import KeyhostLedger
import Testing

/// The process's one timer thread (`DeadlineTimers`) and `withDeadline` on it. Each test has its
/// own timers and waits for what it expects to happen; delays only order the deadlines.
@Suite struct DeadlineTimersTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func add(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }
    }

    /// Deadlines fire earliest first, and a cancelled one never fires: it was due before the last.
    @Test func firesInOrderAndNotWhenCancelled() async throws {
        let timers = DeadlineTimers(), log = Log()
        _ = timers.schedule(after: .milliseconds(150)) { log.add("c") }
        let b = timers.schedule(after: .milliseconds(100)) { log.add("b") }
        _ = timers.schedule(after: .milliseconds(50)) { log.add("a") }
        #expect(timers.cancel(b))
        #expect(try await eventually { log.all.count == 2 })
        #expect(log.all == ["a", "c"])
        #expect(timers.pending == 0)
        #expect(!timers.cancel(b))
    }

    /// The thread sleeping toward an hour away is woken for a deadline set after it that is due
    /// sooner (without that it would fire in an hour, and the wait below would fail).
    @Test func anEarlierDeadlineWakesTheSleepingThread() async throws {
        let timers = DeadlineTimers(), log = Log()
        let far = timers.schedule(after: .seconds(3600)) { log.add("far") }
        #expect(try await eventually { timers.sleepsUntil != nil })
        _ = timers.schedule(after: .milliseconds(20)) { log.add("near") }
        #expect(try await eventually { log.all == ["near"] })
        #expect(timers.cancel(far))
        #expect(timers.pending == 0)
    }

    /// Many deadlines cancelled in any order leave none behind, and the rest still fire in order.
    @Test func removalsKeepTheHeapInOrder() async throws {
        let timers = DeadlineTimers(), log = Log()
        var set: [(Int, DeadlineTimers.Timer)] = []
        for i in (0..<200).shuffled() {
            set.append((i, timers.schedule(after: .milliseconds(200 + 2 * i)) { log.add(String(i)) }))
        }
        let kept = Set((0..<200).filter { $0 % 3 == 0 })
        for (i, timer) in set.shuffled() where !kept.contains(i) { #expect(timers.cancel(timer)) }
        #expect(try await eventually { log.all.count == kept.count })
        #expect(log.all == kept.sorted().map(String.init))
        #expect(timers.pending == 0)
    }

    /// A body that ignores cancellation still gets its caller the late error at the limit.
    @Test func theAnswerComesAtTheLimitWhateverTheBodyDoes() async throws {
        let released = Log()
        await #expect {
            _ = try await withDeadline(.milliseconds(50), error: LedgerError(kind: "timeout", message: "late")) {
                while released.all.isEmpty { try? await Task.sleep(for: .milliseconds(10)) }
                return 1
            }
        } throws: { error in
            (error as? LedgerError)?.kind == "timeout"
        }
        released.add("go")
        #expect(try await withDeadline(.seconds(60), error: LedgerError(kind: "timeout", message: "late")) { 2 } == 2)
    }
}
