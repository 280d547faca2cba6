internal import CSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An SQLite database file with one connection, safe to share between threads and tasks: every
/// use goes through `access` (or `transaction`), one at a time, like GRDB's `DatabaseQueue`.
///
/// Thread safety: the connection is opened with SQLITE_OPEN_NOMUTEX and guarded by this object's
/// own mutex. SQLite's FULLMUTEX would only make single calls atomic, while a statement's
/// bind-step-read-reset and a transaction's statements must run together without another thread's
/// statements in between; that needs the outer lock anyway, and with it SQLite's would be waste.
/// Other processes (and other `Database`s on the same file) are kept apart by SQLite's file
/// locks, waited for up to the busy timeout.
public final class Database: Sendable {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Read only; fails if the file is missing.
        case readOnly
        /// Read and write; fails if the file is missing.
        case readWrite
        /// Read and write, creating the file if it is missing.
        case readWriteCreate

        var flags: Int32 {
            switch self {
            case .readOnly: SQLITE_OPEN_READONLY
            case .readWrite: SQLITE_OPEN_READWRITE
            case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            }
        }
    }

    /// The file's path as given.
    public let path: String
    /// The connection, nil once closed. The mutex is the only way to it.
    private let connection: Mutex<Connection?>

    /// Opens `path`, waits up to `busyTimeout` for other connections' locks, then runs `setUp`
    /// (pragmas such as the journal mode) before anything else uses the connection.
    ///
    /// `setUp` runs again while it fails with SQLITE_BUSY, until `busyTimeout` has passed: switching
    /// a new file to WAL takes a lock SQLite's busy handler does not wait for, so connections
    /// opening the same new file at once would otherwise fail at once. It must be repeatable.
    public init(path: String, mode: Mode = .readWriteCreate, busyTimeout: Duration = .seconds(5),
                setUp: (Connection) throws -> Void = { _ in }) throws {
        self.path = path
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, mode.flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let error = handle.map { SQLiteError.last($0, sql: nil) }
                ?? SQLiteError(extendedCode: status, message: String(cString: sqlite3_errstr(status)), sql: nil)
            // A failed open may still have allocated a handle, which must be closed.
            sqlite3_close_v2(handle)
            throw error
        }
        // Extended codes tell SQLITE_CONSTRAINT_CHECK from SQLITE_CONSTRAINT_FOREIGNKEY and so on.
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        let opened = Connection(handle: handle)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: busyTimeout)
        // Any other error is thrown as it is; `opened` is released then and closes the handle.
        while true {
            do {
                try setUp(opened)
                break
            } catch let error as SQLiteError where error.isBusy && clock.now < deadline {
                usleep(20_000)
            }
        }
        connection = Mutex(opened)
    }

    /// Runs `body` with the connection, no other thread using it meanwhile.
    public func access<T>(_ body: (Connection) throws -> T) throws -> T {
        try connection.withLock { connection in
            guard let connection else { throw SQLiteError(extendedCode: SQLiteError.misuse, message: "the database \(path) is closed", sql: nil) }
            return try body(connection)
        }
    }

    /// Runs `body` in one transaction of `kind` (see `Connection.transaction`).
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: (Connection) throws -> T) throws -> T {
        try access { try $0.transaction(kind, body) }
    }

    /// Finalizes every statement and closes the connection; later use throws SQLITE_MISUSE.
    public func close() {
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }
}
