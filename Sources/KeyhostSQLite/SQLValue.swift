/// One SQLite value: what a column holds or a parameter binds.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// SQLite's name for the storage class, for messages (never the value itself: it may be a secret).
    public var storageClass: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}

/// A Swift value that can be bound to a statement parameter.
public protocol SQLBindable {
    /// The value as SQLite stores it.
    var sqlValue: SQLValue { get }
}

/// A Swift value that a column can be read as.
public protocol SQLColumnConvertible {
    /// The value converted from what the column holds, or nil when the storage class does not convert.
    init?(sqlValue: SQLValue)
}

extension SQLValue: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { self }
    public init?(sqlValue: SQLValue) { self = sqlValue }
}

extension Int64: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .integer(self) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Int: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue, let exact = Int(exactly: value) else { return nil }
        self = exact
    }
}

extension Int32: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        // Out of range is a mismatch, never a truncation.
        guard case .integer(let value) = sqlValue, let exact = Int32(exactly: value) else { return nil }
        self = exact
    }
}

extension Bool: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value != 0
    }
}

extension Double: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .real(self) }
    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension String: SQLBindable, SQLColumnConvertible {
    public var sqlValue: SQLValue { .text(self) }
    public init?(sqlValue: SQLValue) {
        guard case .text(let value) = sqlValue else { return nil }
        self = value
    }
}

/// Bytes are a BLOB (`Data` would need Foundation).
extension Array: SQLBindable, SQLColumnConvertible where Element == UInt8 {
    public var sqlValue: SQLValue { .blob(self) }
    public init?(sqlValue: SQLValue) {
        guard case .blob(let value) = sqlValue else { return nil }
        self = value
    }
}

/// NULL reads as nil; any other value must convert to `Wrapped`.
extension Optional: SQLColumnConvertible where Wrapped: SQLColumnConvertible {
    public init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
            return
        }
        guard let value = Wrapped(sqlValue: sqlValue) else { return nil }
        self = .some(value)
    }
}
