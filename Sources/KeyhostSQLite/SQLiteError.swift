internal import CSQLite

/// A failure reported by SQLite, or a misuse of this wrapper caught before SQLite saw it.
///
/// The message is SQLite's own (it names tables, columns and constraints, never bound values) and
/// the statement is only its first words: bound values can be secrets and never appear here.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    public let code: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_CHECK`, ...); equal to `code` when there is none.
    public let extendedCode: Int32
    /// SQLite's message, or this wrapper's for a misuse.
    public let message: String
    /// The first words of the statement that failed, or nil when no statement was involved.
    public let statement: String?

    /// An error with these codes and message; `sql` is cut to its first words.
    public init(extendedCode: Int32, message: String, sql: String?) {
        self.code = extendedCode & 0xff
        self.extendedCode = extendedCode
        self.message = message
        self.statement = sql.map(Self.firstWords)
    }

    public var description: String {
        let context = statement.map { " in \"\($0)\"" } ?? ""
        return "\(message) (SQLite code \(extendedCode))\(context)"
    }

    /// Whether another connection holds a lock this one needed (after the busy timeout ran out).
    public var isBusy: Bool { code == Self.busy }
    /// Whether a constraint (CHECK, UNIQUE, NOT NULL, foreign key, or a trigger's RAISE) refused the change.
    public var isConstraint: Bool { code == Self.constraint }

    /// SQLITE_BUSY.
    public static let busy = SQLITE_BUSY
    /// SQLITE_CONSTRAINT.
    public static let constraint = SQLITE_CONSTRAINT
    /// SQLITE_ERROR: SQL that does not parse or names what does not exist.
    public static let error = SQLITE_ERROR
    /// SQLITE_MISMATCH: a column read as a type its value does not convert to.
    public static let mismatch = SQLITE_MISMATCH
    /// SQLITE_MISUSE: the wrapper used wrongly (a closed database, wrong argument count).
    public static let misuse = SQLITE_MISUSE
    /// SQLITE_NOTADB: the file is not an SQLite database.
    public static let notADatabase = SQLITE_NOTADB
    /// SQLITE_CANTOPEN: the file cannot be opened (missing directory, permissions).
    public static let cantOpen = SQLITE_CANTOPEN
    /// SQLITE_READONLY: a write on a read-only connection or file.
    public static let readOnly = SQLITE_READONLY

    /// The error SQLite recorded on `handle` for the call that just failed.
    static func last(_ handle: OpaquePointer?, sql: String?) -> SQLiteError {
        guard let handle else { return SQLiteError(extendedCode: SQLITE_NOMEM, message: "out of memory", sql: sql) }
        return SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Up to three words and 40 characters: enough to find the statement in the code, too little to
    /// carry a value spelled into the SQL.
    static func firstWords(_ sql: String) -> String {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        let head = words.prefix(3).joined(separator: " ")
        let cut = head.count > 40 ? String(head.prefix(40)) : head
        return words.count > 3 || cut != head ? cut + " …" : cut
    }
}
