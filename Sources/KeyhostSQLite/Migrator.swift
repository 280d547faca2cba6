/// Brings a database's schema up to date by running, in order, the migrations not yet recorded
/// in its migrations table.
///
/// The table is GRDB's layout (`identifier TEXT NOT NULL PRIMARY KEY`, one row per applied
/// migration), so files whose migrations GRDB recorded go on without running them again.
public struct Migrator {
    /// The table that records applied migrations.
    public let table: String
    private var migrations: [(identifier: String, migrate: (Connection) throws -> Void)] = []

    /// A migrator recording in `table` (a plain identifier: letters, digits and '_').
    public init(table: String) {
        self.table = table
    }

    /// Adds the migration `identifier`, run after those registered before it.
    public mutating func register(_ identifier: String, _ migrate: @escaping (Connection) throws -> Void) {
        migrations.append((identifier, migrate))
    }

    /// The identifiers of the registered migrations, in order.
    public var identifiers: [String] { migrations.map(\.identifier) }

    /// Runs every registered migration the file has not recorded.
    ///
    /// Checking and applying happen in one IMMEDIATE transaction, so of several connections
    /// migrating one new file at once exactly one applies each migration and the others find it
    /// done. A file already up to date is only read: opening it takes no write lock.
    public func migrate(_ database: Database) throws {
        try checkTableName()
        let missing = try database.transaction(.deferred) { try pending($0) }
        guard !missing.isEmpty else { return }
        try database.access { connection in
            // As GRDB (and SQLite's ALTER TABLE guide) do: foreign keys off while a migration
            // reshapes tables, then checked at once before COMMIT. The pragma does nothing inside
            // a transaction, so it is set around it.
            let foreignKeys = try connection.fetchValue("PRAGMA foreign_keys", as: Bool.self) ?? false
            if foreignKeys { try connection.execute("PRAGMA foreign_keys = OFF") }
            defer { if foreignKeys { try? connection.execute("PRAGMA foreign_keys = ON") } }
            try connection.transaction(.immediate) { connection in
                try connection.execute("CREATE TABLE IF NOT EXISTS \(table) (identifier TEXT NOT NULL PRIMARY KEY)")
                // Asked again under the write lock: another connection may have migrated meanwhile.
                let applied = Set(try connection.fetchAll("SELECT identifier FROM \(table)").map { row -> String in try row[0] })
                for migration in migrations where !applied.contains(migration.identifier) {
                    try migration.migrate(connection)
                    try connection.execute("INSERT INTO \(table) (identifier) VALUES (?)", [migration.identifier])
                }
                if foreignKeys, let broken = try connection.fetchOne("PRAGMA foreign_key_check") {
                    let name: String = (try? broken["table"]) ?? "?"
                    throw SQLiteError(extendedCode: 787 /* SQLITE_CONSTRAINT_FOREIGNKEY */,
                                      message: "a migration left rows in table \(name) whose foreign keys point nowhere", sql: nil)
                }
            }
        }
    }

    /// The registered migrations the file has not recorded (all of them for a new file).
    public func pending(_ connection: Connection) throws -> [String] {
        let exists = try connection.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]) != nil
        let applied = exists ? Set(try connection.fetchAll("SELECT identifier FROM \(table)").map { row -> String in try row[0] }) : []
        return identifiers.filter { !applied.contains($0) }
    }

    /// The table name is spelled into SQL, so it must be a plain identifier.
    private func checkTableName() throws {
        let plain = !table.isEmpty && table.utf8.allSatisfy { $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        guard plain else {
            throw SQLiteError(extendedCode: SQLiteError.misuse, message: "the migrations table '\(table)' is not a plain identifier (letters, digits, '_')", sql: nil)
        }
    }
}
