internal import CSQLite

/// One open SQLite connection, handed to the closures of `Database`, which serializes every use of
/// it: it must not be kept or used outside the closure it was given to.
// @unchecked: a connection is used by one thread at a time, which `Database` enforces by handing it out only
// under its Mutex. That lock is the only one: the handle is opened SQLITE_OPEN_NOMUTEX, because SQLite's
// serialized mode would only make single calls atomic, and a statement's bind-step-reset and a transaction
// need the outer lock anyway (Database.swift says the same).
public final class Connection: @unchecked Sendable {
    /// Nil once closed.
    private var handle: OpaquePointer?
    /// Statements by SQL text, prepared once and reused (finalized at close).
    private var statements: [String: Statement] = [:]

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { close() }

    /// Rows changed by the last INSERT, UPDATE or DELETE (not counting triggers).
    public var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes64(handle))
    }

    /// Whether a transaction is open (BEGIN without COMMIT or ROLLBACK yet).
    public var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// The prepared statement for `sql` (one statement), compiled on first use and reused after.
    public func prepare(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        let handle = try open()
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        // PERSISTENT: the statement is kept for reuse, so SQLite should not take it from its lookaside memory.
        let prepared = sql.withCString { text -> Result<Void, SQLiteError> in
            guard sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail) == SQLITE_OK else {
                return .failure(.last(handle, sql: sql))
            }
            // More than whitespace and comments after the first statement: the rest would be
            // silently skipped, so it is refused.
            // Text that does not compile counts too, or "SELECT 1; garbage" would pass; empty
            // statements (";;") compile to nothing, so the check goes on past them.
            var rest = tail
            while let text = rest, text.pointee != 0 {
                var next: OpaquePointer?
                var after: UnsafePointer<CChar>?
                let status = sqlite3_prepare_v2(handle, text, -1, &next, &after)
                if let next { sqlite3_finalize(next) }
                if status != SQLITE_OK || next != nil {
                    return .failure(SQLiteError(extendedCode: SQLiteError.misuse,
                                                message: "several statements in one (more text after the first); run them with executeScript", sql: sql))
                }
                guard let after, after != text else { break }
                rest = after
            }
            return .success(())
        }
        if case .failure(let error) = prepared {
            sqlite3_finalize(statement)
            throw error
        }
        guard let statement else {
            throw SQLiteError(extendedCode: SQLiteError.misuse, message: "no statement in the SQL", sql: sql)
        }
        let made = Statement(handle: statement, sql: sql)
        statements[sql] = made
        return made
    }

    /// Runs one statement with `arguments` (bound to its `?` in order), discarding any rows.
    public func execute(_ sql: String, _ arguments: [(any SQLBindable)?] = []) throws {
        try prepare(sql).execute(arguments)
    }

    /// Every row of one statement.
    public func fetchAll(_ sql: String, _ arguments: [(any SQLBindable)?] = []) throws -> [Row] {
        try prepare(sql).fetchAll(arguments)
    }

    /// The first row of one statement, or nil.
    public func fetchOne(_ sql: String, _ arguments: [(any SQLBindable)?] = []) throws -> Row? {
        try prepare(sql).fetchOne(arguments)
    }

    /// The first column of the first row (nil for no row, or NULL), e.g. `PRAGMA user_version`.
    public func fetchValue<T: SQLColumnConvertible>(_ sql: String, _ arguments: [(any SQLBindable)?] = [], as type: T.Type = T.self) throws -> T? {
        guard let row = try fetchOne(sql, arguments) else { return nil }
        let value: T? = try row[0]
        return value
    }

    /// Runs every statement in `sql` in order (a schema, say), without arguments and without caching.
    public func executeScript(_ sql: String) throws {
        let handle = try open()
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let text = next, text.pointee != 0 {
                var statement: OpaquePointer?
                guard sqlite3_prepare_v2(handle, text, -1, &statement, &next) == SQLITE_OK else {
                    throw SQLiteError.last(handle, sql: String(cString: text))
                }
                guard let statement else { continue }  // only whitespace or a comment was left
                defer { sqlite3_finalize(statement) }
                var step = sqlite3_step(statement)
                while step == SQLITE_ROW { step = sqlite3_step(statement) }
                guard step == SQLITE_DONE else { throw SQLiteError.last(handle, sql: String(cString: sqlite3_sql(statement))) }
            }
        }
    }

    /// Finalizes every statement and closes the connection; later use throws.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements = [:]
        // close_v2: if a statement were somehow still alive, SQLite closes once it is finalized
        // instead of failing with SQLITE_BUSY and leaking the connection.
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// The open handle, or a misuse error once closed.
    private func open() throws -> OpaquePointer {
        guard let handle else { throw SQLiteError(extendedCode: SQLiteError.misuse, message: "the database is closed", sql: nil) }
        return handle
    }
}
