/// One result row, copied out of SQLite: it stays valid after the statement moves on.
public struct Row: Sendable {
    /// The column names, as the statement names them.
    public let columns: [String]
    /// The values, in column order.
    public let values: [SQLValue]
    /// The first words of the statement, for errors.
    let statement: String

    init(columns: [String], values: [SQLValue], statement: String) {
        self.columns = columns
        self.values = values
        self.statement = statement
    }

    /// The value of column `name` as `T`; NULL reads as nil when `T` is optional.
    /// Throws (never traps) for a missing column or a value that does not convert.
    public subscript<T: SQLColumnConvertible>(_ name: String) -> T {
        get throws { try convert(values[index(of: name)], column: "'\(name)'") }
    }

    /// The value of the column at `index` (from 0) as `T`.
    public subscript<T: SQLColumnConvertible>(_ index: Int) -> T {
        get throws {
            guard values.indices.contains(index) else {
                throw SQLiteError(extendedCode: SQLiteError.misuse, message: "no column \(index): the row has \(values.count)", sql: statement)
            }
            return try convert(values[index], column: "\(index) ('\(columns[index])')")
        }
    }

    /// Column positions are found by name like SQLite does: ASCII case does not matter.
    private func index(of name: String) throws -> Int {
        if let exact = columns.firstIndex(of: name) { return exact }
        let lower = Self.asciiLowercased(name)
        if let folded = columns.firstIndex(where: { Self.asciiLowercased($0) == lower }) { return folded }
        throw SQLiteError(
            extendedCode: SQLiteError.misuse, message: "no column '\(name)' in the result (it has \(columns.joined(separator: ", ")))", sql: statement)
    }

    private func convert<T: SQLColumnConvertible>(_ value: SQLValue, column: String) throws -> T {
        guard let converted = T(sqlValue: value) else {
            // The storage class only: the value itself may be a secret.
            throw SQLiteError(extendedCode: SQLiteError.mismatch, message: "column \(column) holds \(value.storageClass), which does not read as \(T.self)",
                              sql: statement)
        }
        return converted
    }

    private static func asciiLowercased(_ text: String) -> [UInt8] {
        text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}
