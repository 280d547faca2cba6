import Dispatch

/// Runs async work (PostgreSQL, the HTTP server) from keyhost's synchronous callers: a command, or
/// a Lua call. The calling thread waits on a semaphore while the work runs on Swift's cooperative
/// pool, so it never blocks a thread the work needs.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Written once by the task before it signals, read once after the wait.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

/// Runs blocking work (waiting on worker processes) on a Dispatch thread and awaits it, so that
/// Swift's cooperative pool keeps its few threads for the work that needs them.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
