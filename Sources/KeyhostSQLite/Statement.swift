internal import CSQLite

/// A prepared statement, compiled once and run again with new arguments. Made by
/// `Connection.prepare`, which keeps it for reuse; usable only inside the `Database` access that
/// made it, and finalized when its connection closes.
public final class Statement {
    /// The SQL text as given.
    public let sql: String
    /// Nil once finalized.
    private var handle: OpaquePointer?
    /// The first words of `sql`, for errors and rows.
    private let context: String
    /// Column names, read once: they are fixed for a prepared statement.
    private let columns: [String]

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        self.context = SQLiteError.firstWords(sql)
        self.columns = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    deinit { finalize() }

    /// Runs the statement to its end, discarding any rows.
    public func execute(_ arguments: [(any SQLBindable)?] = []) throws {
        try run(arguments) { _ in true }
    }

    /// Every row the statement returns.
    public func fetchAll(_ arguments: [(any SQLBindable)?] = []) throws -> [Row] {
        var rows: [Row] = []
        try run(arguments) { handle in
            rows.append(self.row(handle))
            return true
        }
        return rows
    }

    /// The first row, or nil if there is none (the statement is not run further).
    public func fetchOne(_ arguments: [(any SQLBindable)?] = []) throws -> Row? {
        var first: Row?
        try run(arguments) { handle in
            first = self.row(handle)
            return false
        }
        return first
    }

    /// Releases SQLite's statement; later use throws.
    func finalize() {
        if let handle { sqlite3_finalize(handle) }
        handle = nil
    }

    /// Binds, steps while `onRow` says go on, and always resets: a statement left mid-way would keep
    /// its read transaction (and the WAL snapshot) open.
    private func run(_ arguments: [(any SQLBindable)?], onRow: (OpaquePointer) -> Bool) throws {
        guard let handle else {
            throw SQLiteError(extendedCode: SQLiteError.misuse, message: "the statement was finalized (its database is closed)", sql: sql)
        }
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try bind(arguments, to: handle)
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW:
                if !onRow(handle) { return }
            case SQLITE_DONE:
                return
            default:
                throw SQLiteError.last(sqlite3_db_handle(handle), sql: sql)
            }
        }
    }

    private func bind(_ arguments: [(any SQLBindable)?], to handle: OpaquePointer) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError(extendedCode: SQLITE_RANGE, message: "the statement takes \(expected) arguments, \(arguments.count) were given", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            // TRANSIENT: SQLite copies the bytes before returning, so the Swift buffers may go.
            switch argument?.sqlValue ?? .null {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let value): result = sqlite3_bind_int64(handle, index, value)
            case .real(let value): result = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                // With an explicit length, so a text with NUL characters is bound whole.
                var utf8 = Array(value.utf8)
                utf8.append(0)  // a non-null pointer even for "", which SQLite would otherwise bind as NULL
                result = utf8.withUnsafeBufferPointer {
                    $0.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text64(handle, index, $0.baseAddress, UInt64($0.count - 1), csqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes) where bytes.isEmpty:
                // A NULL pointer would bind NULL: an empty blob is a zero-length zeroblob.
                result = sqlite3_bind_zeroblob(handle, index, 0)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, UInt64($0.count), csqlite_transient()) }
            }
            guard result == SQLITE_OK else { throw SQLiteError.last(sqlite3_db_handle(handle), sql: sql) }
        }
    }

    /// The current row, copied.
    private func row(_ handle: OpaquePointer) -> Row {
        let values = (0..<Int32(columns.count)).map { column -> SQLValue in
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
            case SQLITE_TEXT:
                // The pointer first, then its length (SQLite's documented order).
                guard let text = sqlite3_column_text(handle, column) else { return .text("") }
                let count = Int(sqlite3_column_bytes(handle, column))
                return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                // A zero-length blob comes back as a NULL pointer.
                guard let blob = sqlite3_column_blob(handle, column) else { return .blob([]) }
                let count = Int(sqlite3_column_bytes(handle, column))
                return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
            default: return .null
            }
        }
        return Row(columns: columns, values: values, statement: context)
    }
}
