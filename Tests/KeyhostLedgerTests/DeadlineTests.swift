import Foundation
import KeyhostLedger
import KeyhostLedgerDeadline
import NIOEmbedded
import Testing

/// `withDeadline`, whose limit is a task on an event loop of NIO's shared group. Each test waits for
/// what it expects to happen; the limits only order events, and the answers are checked, not timed.
@Suite struct DeadlineTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func add(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }
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
        // On a test loop whose clock stands still, so a starved machine cannot make this deadline fire.
        let loop = NIOAsyncTestingEventLoop()
        #expect(try await withDeadline(.seconds(60), on: loop, late: { LedgerError(kind: "timeout", message: "late") }) { 2 } == 2)
        try await loop.shutdownGracefully()
    }

    /// A body that ends first gets its answer, and its deadline never fires: `late` is not called even
    /// once the loop's clock is past the limit (the scheduled task was cancelled). The loop is a test
    /// loop whose clock moves only when told, so nothing here depends on the machine's speed.
    @Test func aBodyThatEndsFirstCancelsItsDeadline() async throws {
        let log = Log()
        let loop = NIOAsyncTestingEventLoop()
        #expect(try await withDeadline(.milliseconds(30), on: loop, late: { log.add("late"); return LedgerError(kind: "timeout", message: "late") }) { 7 } == 7)
        await loop.advanceTime(by: .seconds(60))
        #expect(log.all.isEmpty)
        try await loop.shutdownGracefully()
    }

    /// An error from the body is the caller's error, not the late one.
    /// The loop's clock stands still, so only the body can end the call (a loaded machine once let a 60 s
    /// deadline on a real loop pass before the body's task was first run).
    @Test func theBodysErrorComesThrough() async throws {
        let loop = NIOAsyncTestingEventLoop()
        await #expect {
            _ = try await withDeadline(.seconds(60), on: loop, late: { LedgerError(kind: "timeout", message: "late") }) { () -> Int in
                throw LedgerError(kind: "store", message: "own")
            }
        } throws: { ($0 as? LedgerError)?.kind == "store" }
        try await loop.shutdownGracefully()
    }
}
