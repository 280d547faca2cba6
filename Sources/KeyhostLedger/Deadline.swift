import Dispatch

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
        race.timer(Task {
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled, race.expire(late) else { return }
            work.cancel()
        })
    }
}

/// Whichever of the work and the timer ends first resumes the caller; the other finds it done.
private final class DeadlineRace<T: Sendable>: @unchecked Sendable {
    private let queue = DispatchQueue(label: "keyhost.ledger.deadline")
    private var continuation: CheckedContinuation<T, Error>?
    private var timerTask: Task<Void, Never>?
    private var done = false

    func start(_ continuation: CheckedContinuation<T, Error>) { queue.sync { self.continuation = continuation } }

    func timer(_ task: Task<Void, Never>) {
        let cancel = queue.sync { () -> Bool in
            if done { return true }
            timerTask = task
            return false
        }
        if cancel { task.cancel() }
    }

    func finish(_ result: Result<T, Error>) {
        let (continuation, timer) = queue.sync { () -> (CheckedContinuation<T, Error>?, Task<Void, Never>?) in
            if done { return (nil, nil) }
            done = true
            defer { self.continuation = nil; timerTask = nil }
            return (self.continuation, timerTask)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// True when the limit came first; `late` is then the caller's error.
    func expire(_ late: () -> Error) -> Bool {
        let continuation = queue.sync { () -> CheckedContinuation<T, Error>? in
            if done { return nil }
            done = true
            defer { self.continuation = nil; timerTask = nil }
            return self.continuation
        }
        guard let continuation else { return false }
        continuation.resume(throwing: late())
        return true
    }
}
