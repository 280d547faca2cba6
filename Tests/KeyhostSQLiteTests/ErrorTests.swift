import Foundation
import KeyhostSQLite
import KeyhostTestSupport
import Testing

/// What a failure says: SQLite's codes and message and the statement's first words, never a bound value.
@Suite struct ErrorTests {
    static let secret = "correct horse battery staple 5f3a"

    @Test func aConstraintViolationHasItsCodesAndMessageButNotTheBoundValue() throws {
        try withDatabase { database in
            try database.access { db throws in
                try db.execute("CREATE TABLE keys (name TEXT PRIMARY KEY, secret TEXT NOT NULL CHECK (length(secret) < 10))")
                let check = try #require(thrown(SQLiteError.self) { try db.execute("INSERT INTO keys (name, secret) VALUES (?, ?)", ["a", Self.secret]) })
                #expect(check.code == SQLiteError.constraint && check.isConstraint)
                #expect(check.extendedCode == 275)  // SQLITE_CONSTRAINT_CHECK
                #expect(check.message.contains("CHECK constraint failed"))
                #expect(check.statement == "INSERT INTO keys …")
                #expect(!check.description.contains(Self.secret) && !check.description.contains("5f3a"))

                try db.execute("INSERT INTO keys (name, secret) VALUES (?, ?)", [Self.secret, "x"])
                let unique = try #require(thrown(SQLiteError.self) { try db.execute("INSERT INTO keys (name, secret) VALUES (?, ?)", [Self.secret, "y"]) })
                #expect(unique.extendedCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
                #expect(unique.message.contains("keys.name"))
                #expect(!unique.description.contains(Self.secret))
                #expect(unique.description.contains("SQLite code 1555"))
            }
        }
    }

    @Test func aSyntaxErrorSaysWhereAndInWhichStatement() throws {
        try withDatabase { database in
            let error = try #require(thrown(SQLiteError.self) { try database.access { try $0.execute("SELEC 1 FROM nowhere") } })
            #expect(error.code == SQLiteError.error)
            #expect(error.message.contains("syntax error"))
            #expect(error.statement == "SELEC 1 FROM …")
            let missing = try #require(thrown(SQLiteError.self) { try database.access { try $0.fetchAll("SELECT * FROM nowhere") } })
            #expect(missing.message.contains("no such table: nowhere"))
        }
    }

    @Test func theWrongNumberOfArgumentsIsRefusedBeforeRunning() throws {
        try withDatabase { database in
            try database.access { db throws in
                try db.execute("CREATE TABLE t (a, b)")
                let error = try #require(thrown(SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?, ?)", [1]) })
                #expect(error.message == "the statement takes 2 arguments, 1 were given")
                #expect(try db.fetchValue("SELECT count(*) FROM t", as: Int.self) == 0)
            }
        }
    }

    @Test func twoStatementsInOneAreRefusedButAScriptRunsThemAll() throws {
        try withDatabase { database in
            try database.access { db throws in
                let error = try #require(thrown(SQLiteError.self) { try db.execute("CREATE TABLE a (x); CREATE TABLE b (x)") })
                #expect(error.code == SQLiteError.misuse && error.message.contains("executeScript"))
                #expect(try db.fetchValue("SELECT count(*) FROM sqlite_master", as: Int.self) == 0)
                // Nor is text after the first statement that does not compile skipped.
                for sql in ["SELECT 1; garbage", "SELECT 1; SELECT * FROM nowhere", "SELECT 1;;x"] {
                    let more = try #require(thrown(SQLiteError.self) { try db.execute(sql) }, "\(sql)")
                    #expect(more.code == SQLiteError.misuse && more.message.contains("executeScript"), "\(sql)")
                }
                // Trailing whitespace and comments are not a second statement.
                try db.execute("CREATE TABLE a (x); -- done\n")
                try db.executeScript("CREATE TABLE b (x); INSERT INTO b VALUES (1); /* end */ INSERT INTO b VALUES (2);\n-- the end")
                #expect(try db.fetchValue("SELECT sum(x) FROM b", as: Int.self) == 3)
                let failing = try #require(thrown(SQLiteError.self) { try db.executeScript("INSERT INTO b VALUES (3); INSERT INTO nowhere VALUES (4); INSERT INTO b VALUES (5)") })
                #expect(failing.message.contains("nowhere"))
                // Statements before the failing one ran (a script is not a transaction), later ones did not.
                #expect(try db.fetchValue("SELECT sum(x) FROM b", as: Int.self) == 6)
            }
        }
    }

    @Test func openingWhatCannotBeOpenedNamesTheProblem() throws {
        try withTemporaryDirectory { directory in
            let missing = try #require(thrown(SQLiteError.self) { try Database(path: directory + "/no/such/dir/x.db") })
            #expect(missing.code == SQLiteError.cantOpen)
            let readOnlyMissing = try #require(thrown(SQLiteError.self) { try Database(path: directory + "/absent.db", mode: .readOnly) })
            #expect(readOnlyMissing.code == SQLiteError.cantOpen)

            let garbage = directory + "/garbage.db"
            let file = try #require(fopen(garbage, "wb"))
            fwrite([UInt8](repeating: 0x41, count: 4096), 1, 4096, file)
            fclose(file)
            let notADatabase = try #require(thrown(SQLiteError.self) { try Database(path: garbage) { try $0.execute("PRAGMA journal_mode = WAL") } })
            #expect(notADatabase.code == SQLiteError.notADatabase)
            #expect(notADatabase.message.contains("not a database"))

            _ = try Database(path: directory + "/made.db") { try $0.execute("CREATE TABLE t (x)") }
            let readOnly = try Database(path: directory + "/made.db", mode: .readOnly)
            #expect(thrown(SQLiteError.self) { try readOnly.access { try $0.execute("INSERT INTO t VALUES (1)") } }?.code == SQLiteError.readOnly)
        }
    }

    @Test func aClosedDatabaseRefusesUse() throws {
        try withDatabase { database in
            let statement = try database.access { db -> Statement in
                try db.execute("CREATE TABLE t (x)")
                return try db.prepare("INSERT INTO t VALUES (?)")
            }
            database.close()
            #expect(thrown(SQLiteError.self) { try database.access { try $0.execute("SELECT 1") } }?.code == SQLiteError.misuse)
            // A statement kept past its database fails cleanly instead of touching freed memory.
            #expect(thrown(SQLiteError.self) { try statement.execute([1]) }?.code == SQLiteError.misuse)
            database.close()  // closing twice is harmless
        }
    }
}
