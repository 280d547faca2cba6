import KeyhostLedger
import NIOCore
import NIOPosix
import Synchronization

/// `body`, or `error` once `limit` has passed (body is then cancelled). PostgresNIO's pool waits
/// for a connection as long as it is asked to, so every wait for the database has a limit.
public func withDeadline<T: Sendable>(_ limit: Duration, error: LedgerError, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withDeadline(limit, late: { error }, body)
}

/// `body`, or the error `late` returns once `limit` has passed. The answer comes at the limit even
/// when `body` ignores cancellation (a PostgresNIO query waits for the server however long it is
/// silent): `body` is cancelled and left to end on its own, so `late` must make it end, and make
/// sure it changes nothing from then on (the PostgreSQL store closes its connection there).
///
/// The limit is a task scheduled on an event loop of NIO's shared group (`loop`), the one the HTTP
/// service and PostgresNIO already run on: no timer thread of keyhost's own. Only keyhost-ledger
/// links this module; keyhost itself has no such deadlines.
public func withDeadline<T: Sendable>(
    _ limit: Duration, on loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any(),
    late: @escaping @Sendable () -> Error, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        let work = Task {
            let result: Result<T, Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            race.finish(result)
        }
        let (seconds, attoseconds) = limit.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let delay: TimeAmount = nanoseconds.overflow ? .hours(24 * 365) : .nanoseconds(nanoseconds.partialValue + attoseconds / 1_000_000_000)
        race.timer(loop.scheduleTask(in: delay) {
            if race.expire(late) { work.cancel() }
        })
    }
}

/// Whichever of the work and the timer ends first resumes the caller; the other finds it done.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct Fields {
        var continuation: CheckedContinuation<T, Error>?
        var timer: Scheduled<Void>?
        var done = false
    }
    private let fields = Mutex(Fields())

    func start(_ continuation: CheckedContinuation<T, Error>) { fields.withLock { $0.continuation = continuation } }

    func timer(_ timer: Scheduled<Void>) {
        let cancel = fields.withLock { fields -> Bool in
            if fields.done { return true }
            fields.timer = timer
            return false
        }
        if cancel { timer.cancel() }
    }

    func finish(_ result: Result<T, Error>) {
        let (continuation, timer) = fields.withLock { fields -> (CheckedContinuation<T, Error>?, Scheduled<Void>?) in
            if fields.done { return (nil, nil) }
            fields.done = true
            defer { fields.continuation = nil; fields.timer = nil }
            return (fields.continuation, fields.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// True when the limit came first; `late` is then the caller's error.
    func expire(_ late: () -> Error) -> Bool {
        let continuation = fields.withLock { fields -> CheckedContinuation<T, Error>? in
            if fields.done { return nil }
            fields.done = true
            defer { fields.continuation = nil; fields.timer = nil }
            return fields.continuation
        }
        guard let continuation else { return false }
        continuation.resume(throwing: late())
        return true
    }
}
