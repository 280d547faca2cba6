import Foundation
import KeyhostSQLite
import KeyhostTestSupport
import Testing

/// Migrations run once each, in order, recorded in GRDB's table layout.
@Suite struct MigratorTests {
    static func migrator(log: Locked<[String]>? = nil) -> Migrator {
        var migrator = Migrator(table: "grdb_migrations")
        migrator.register("v1") { db in
            log?.update { $0.append("v1") }
            try db.executeScript("CREATE TABLE items (id INTEGER PRIMARY KEY); PRAGMA user_version = 1;")
        }
        migrator.register("v2") { db in
            log?.update { $0.append("v2") }
            try db.executeScript("ALTER TABLE items ADD COLUMN name TEXT; PRAGMA user_version = 2;")
        }
        return migrator
    }

    @Test func aNewFileGetsEveryMigrationOnceAndInOrder() throws {
        try withDatabase { database in
            let log = Locked<[String]>([])
            try Self.migrator(log: log).migrate(database)
            try Self.migrator(log: log).migrate(database)
            #expect(log.value == ["v1", "v2"])
            try database.access { db throws in
                #expect(try db.fetchAll("SELECT identifier FROM grdb_migrations ORDER BY rowid").map { row -> String in try row[0] } == ["v1", "v2"])
                #expect(try db.fetchValue("PRAGMA user_version", as: Int.self) == 2)
                #expect(try Self.migrator().pending(db) == [])
            }
        }
    }

    /// A file where GRDB recorded v1 (its own `CREATE TABLE grdb_migrations` statement) gets only v2.
    @Test func aFileMigratedByGRDBGoesOnFromWhereItStopped() throws {
        try withDatabase { database in
            try database.access { db throws in
                try db.executeScript("""
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE items (id INTEGER PRIMARY KEY);
                    PRAGMA user_version = 1;
                    """)
                #expect(try Self.migrator().pending(db) == ["v2"])
            }
            let log = Locked<[String]>([])
            try Self.migrator(log: log).migrate(database)
            #expect(log.value == ["v2"])
            try database.access { db throws in #expect(try db.fetchValue("SELECT count(*) FROM pragma_table_info('items') WHERE name = 'name'", as: Int.self) == 1) }
        }
    }

    @Test func aFailingMigrationLeavesNothingBehind() throws {
        try withDatabase { database in
            var migrator = Self.migrator()
            migrator.register("v3") { db in
                try db.execute("CREATE TABLE half (x)")
                try db.execute("INSERT INTO nowhere VALUES (1)")
            }
            let error = try #require(thrown(SQLiteError.self) { try migrator.migrate(database) })
            #expect(error.message.contains("nowhere"))
            try database.access { db throws in
                // All pending migrations share one transaction: none of them is kept.
                #expect(try db.fetchValue("SELECT count(*) FROM sqlite_master WHERE name IN ('items', 'half', 'grdb_migrations')", as: Int.self) == 0)
            }
        }
    }

    @Test func foreignKeysAreCheckedBeforeTheMigrationCommitsAndSwitchedBackOn() throws {
        try withDatabase { database in
            try database.access { try $0.execute("PRAGMA foreign_keys = ON") }
            var migrator = Migrator(table: "schema_log")
            migrator.register("broken") { db in
                try db.executeScript("""
                    CREATE TABLE parent (id INTEGER PRIMARY KEY);
                    CREATE TABLE child (parent INTEGER REFERENCES parent (id));
                    INSERT INTO child VALUES (7);
                    """)
            }
            let error = try #require(thrown(SQLiteError.self) { try migrator.migrate(database) })
            #expect(error.extendedCode == 787 && error.message.contains("child"))
            try database.access { db throws in
                #expect(try db.fetchValue("PRAGMA foreign_keys", as: Bool.self) == true)
                #expect(try db.fetchValue("SELECT count(*) FROM sqlite_master WHERE name = 'child'", as: Int.self) == 0)
            }
        }
    }

    @Test func aTableNameThatIsNotAPlainIdentifierIsRefused() throws {
        try withDatabase { database in
            let error = try #require(thrown(SQLiteError.self) { try Migrator(table: "x; DROP TABLE y").migrate(database) })
            #expect(error.message.contains("not a plain identifier"))
        }
    }

    /// Connections migrating one new file at once: each migration runs exactly once, none fails.
    @Test func connectionsMigratingOneNewFileAtOnceApplyEachMigrationOnce() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/race.db"
            let log = Locked<[String]>([]), failures = Locked<[String]>([])
            onThreads(6) { _ in
                do {
                    let database = try Database(path: path, busyTimeout: .seconds(10)) { try $0.execute("PRAGMA journal_mode = WAL") }
                    try Self.migrator(log: log).migrate(database)
                } catch {
                    failures.update { $0.append("\(error)") }
                }
            }
            #expect(failures.value == [])
            #expect(log.value == ["v1", "v2"])
        }
    }
}
