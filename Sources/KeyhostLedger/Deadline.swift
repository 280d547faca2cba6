/// `body`, or `error` once `limit` has passed (body is then cancelled). PostgresNIO's pool waits
/// for a connection as long as it is asked to, so every wait for the database has a limit.
public func withDeadline<T: Sendable>(_ limit: Duration, error: LedgerError, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw error
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
