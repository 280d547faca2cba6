/// How a transaction takes its locks (SQLite's BEGIN DEFERRED / IMMEDIATE / EXCLUSIVE).
public enum TransactionKind: String, Sendable {
    /// Locks as needed: a read lock at the first read, the write lock at the first write. A
    /// transaction that reads and then writes can fail with SQLITE_BUSY at the write.
    case deferred = "DEFERRED"
    /// Takes the write lock at BEGIN (waiting up to the busy timeout), so nothing read inside can
    /// change before COMMIT and a write never fails for a lock.
    case immediate = "IMMEDIATE"
    /// Like immediate; in WAL mode SQLite treats the two alike.
    case exclusive = "EXCLUSIVE"
}

extension Connection {
    /// Runs `body` in one transaction: committed if it returns, rolled back if it (or COMMIT) throws.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: (Connection) throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue) TRANSACTION")
        do {
            let result = try body(self)
            try execute("COMMIT TRANSACTION")
            return result
        } catch {
            // A failed COMMIT (a deferred foreign key, say) leaves the transaction open, while some
            // errors inside already rolled it back: roll back only what is still open, and report
            // the first error, not the rollback's.
            if isInTransaction { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }
}
