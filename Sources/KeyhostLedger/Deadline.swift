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
public func withDeadline<T: Sendable>(
    _ limit: Duration, late: @escaping @Sendable () -> Error, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        let work = Task {
            let result: Result<T, Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            race.finish(result)
        }
        race.timer(DeadlineTimers.shared.schedule(after: limit) {
            if race.expire(late) { work.cancel() }
        })
    }
}

/// Whichever of the work and the timer ends first resumes the caller; the other finds it done.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct Fields {
        var continuation: CheckedContinuation<T, Error>?
        var timer: DeadlineTimers.Timer?
        var done = false
    }
    private let fields = Mutex(Fields())

    func start(_ continuation: CheckedContinuation<T, Error>) { fields.withLock { $0.continuation = continuation } }

    func timer(_ timer: DeadlineTimers.Timer) {
        let cancel = fields.withLock { fields -> Bool in
            if fields.done { return true }
            fields.timer = timer
            return false
        }
        if cancel { DeadlineTimers.shared.cancel(timer) }
    }

    func finish(_ result: Result<T, Error>) {
        let (continuation, timer) = fields.withLock { fields -> (CheckedContinuation<T, Error>?, DeadlineTimers.Timer?) in
            if fields.done { return (nil, nil) }
            fields.done = true
            defer { fields.continuation = nil; fields.timer = nil }
            return (fields.continuation, fields.timer)
        }
        if let timer { DeadlineTimers.shared.cancel(timer) }
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
