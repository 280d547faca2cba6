import Foundation
import KeyhostSQLite
import KeyhostTestSupport
import Testing

/// Transactions, statement reuse, and several connections on one file.
@Suite struct TransactionTests {
    struct Refused: Error {}

    @Test func aThrowRollsBackAndAReturnCommits() throws {
        try withDatabase { database in
            try database.access { try $0.execute("CREATE TABLE t (x INTEGER)") }
            #expect(throws: Refused.self) {
                try database.transaction(.immediate) { db in
                    try db.execute("INSERT INTO t VALUES (1)")
                    #expect(db.isInTransaction)
                    throw Refused()
                }
            }
            let kept = try database.transaction { db -> Int in
                try db.execute("INSERT INTO t VALUES (2)")
                return db.changes
            }
            #expect(kept == 1)
            try database.access { db throws in
                #expect(!db.isInTransaction)
                #expect(try db.fetchAll("SELECT x FROM t").map { row -> Int in try row["x"] } == [2])
            }
        }
    }

    @Test func aDeferredForeignKeyFailingAtCommitRollsBackEverything() throws {
        try withDatabase { database in
            try database.access { db throws in
                try db.execute("PRAGMA foreign_keys = ON")
                try db.executeScript("""
                    CREATE TABLE parent (id INTEGER PRIMARY KEY);
                    CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
                    """)
            }
            let error = try #require(thrown(SQLiteError.self) {
                try database.transaction(.immediate) { db in
                    try db.execute("INSERT INTO parent VALUES (1)")
                    try db.execute("INSERT INTO child VALUES (2)")  // accepted until COMMIT
                }
            })
            #expect(error.extendedCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
            #expect(error.statement == "COMMIT TRANSACTION")
            try database.access { db throws in
                #expect(!db.isInTransaction)
                #expect(try db.fetchValue("SELECT count(*) FROM parent", as: Int.self) == 0)
            }
        }
    }

    @Test func aPreparedStatementIsReusedAndResetAfterEveryUse() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/reuse.db"
            // A rollback journal, where a reader left mid-way would block the other connection's commit.
            let first = try Database(path: path)
            let second = try Database(path: path, busyTimeout: .milliseconds(100))
            try first.access { db throws in
                try db.execute("CREATE TABLE t (k INTEGER, v BLOB)")
                let insert = try db.prepare("INSERT INTO t VALUES (?, ?)")
                #expect(try db.prepare("INSERT INTO t VALUES (?, ?)") === insert)
                for k in 0..<50 { try insert.execute([k, [UInt8](repeating: UInt8(k), count: k)]) }
                let select = try db.prepare("SELECT v FROM t WHERE k = ?")
                for k in [3, 49, 0, 3] { #expect(try select.fetchOne([k])?["v"] as [UInt8]? == [UInt8](repeating: UInt8(k), count: k)) }
                #expect(try select.fetchOne([99]) == nil)
                // fetchOne read one row of many: the statement must still have let go of its read lock.
                #expect(try db.fetchOne("SELECT k FROM t ORDER BY k") != nil)
            }
            try second.access { try $0.execute("INSERT INTO t VALUES (100, x'')") }
            try first.access { db throws in #expect(try db.fetchValue("SELECT count(*) FROM t", as: Int.self) == 51) }
        }
    }

    @Test func aBusyConnectionWaitsForItsTimeoutThenFailsWithBusy() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/busy.db"
            let holder = try Database(path: path) { try $0.execute("PRAGMA journal_mode = WAL") }
            try holder.access { try $0.execute("CREATE TABLE t (x)") }
            let impatient = try Database(path: path, busyTimeout: .milliseconds(150))
            let patient = try Database(path: path, busyTimeout: .seconds(120))
            let clock = ContinuousClock()
            let started = Locked(false), released = Locked<ContinuousClock.Instant?>(nil), waiting = Locked(0)
            // Each waiter's outcome, when it began waiting and when it was done.
            let outcomes = Locked<[String: (begin: ContinuousClock.Instant, end: ContinuousClock.Instant)]>([:])
            onThreads(3) { index in
                switch index {
                case 0:
                    try? holder.transaction(.immediate) { db in
                        try db.execute("INSERT INTO t VALUES (1)")
                        started.update { $0 = true }
                        // Held until both wait and the impatient one has given up: states, not a
                        // time a slow machine may overrun (the bound only ends a broken run).
                        let bound = clock.now + .seconds(300)
                        func ready() -> Bool { waiting.value == 2 && outcomes.value.keys.contains { $0 != "patient wrote" } }
                        while !ready() && clock.now < bound { usleep(1000) }
                        released.update { $0 = clock.now }
                    }
                default:
                    while !started.value { usleep(1000) }
                    let begin = clock.now
                    waiting.update { $0 += 1 }
                    let database = index == 1 ? impatient : patient
                    let name: String
                    do {
                        try database.transaction(.immediate) { try $0.execute("INSERT INTO t VALUES (2)") }
                        name = "patient wrote"
                    } catch let error as SQLiteError {
                        name = error.isBusy ? "impatient busy" : "other \(error)"
                    } catch {
                        name = "other \(error)"
                    }
                    let end = clock.now
                    outcomes.update { $0[name] = (begin, end) }
                }
            }
            let waited = outcomes.value
            #expect(Set(waited.keys) == ["impatient busy", "patient wrote"])
            let release = try #require(released.value)
            // The impatient one waited its timeout, and gave up while the holder still held the lock.
            let gaveUp = try #require(waited["impatient busy"])
            #expect(gaveUp.end - gaveUp.begin >= .milliseconds(120) && gaveUp.end < release)
            // The patient one, waiting before the holder let go, waited for the rest of its transaction.
            let wrote = try #require(waited["patient wrote"])
            #expect(wrote.begin < release && wrote.end >= release)
            #expect(try holder.access { try $0.fetchValue("SELECT count(*) FROM t", as: Int.self) } == 2)
        }
    }

    /// Read-modify-write in IMMEDIATE transactions from two connections: no update is lost and none
    /// fails, because each takes the write lock before it reads.
    @Test func immediateTransactionsExcludeEachOther() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/counter.db"
            let setUp: (Connection) throws -> Void = { try $0.execute("PRAGMA journal_mode = WAL") }
            try Database(path: path, setUp: setUp).access { db throws in
                try db.execute("CREATE TABLE counter (n INTEGER NOT NULL)")
                try db.execute("INSERT INTO counter VALUES (0)")
            }
            let failures = Locked<[String]>([])
            onThreads(2) { _ in
                do {
                    let database = try Database(path: path, busyTimeout: .seconds(20), setUp: setUp)
                    for _ in 0..<40 {
                        try database.transaction(.immediate) { db in
                            let n = try db.fetchValue("SELECT n FROM counter", as: Int.self) ?? -1
                            usleep(500)  // widen the window a lost update would need
                            try db.execute("UPDATE counter SET n = ?", [n + 1])
                        }
                    }
                } catch {
                    failures.update { $0.append("\(error)") }
                }
            }
            #expect(failures.value == [])
            #expect(try Database(path: path).access { try $0.fetchValue("SELECT n FROM counter", as: Int.self) } == 80)
        }
    }

    /// One Database shared by many threads: its lock keeps each transaction whole.
    @Test func oneDatabaseSharedByThreadsSerializesThem() throws {
        try withTemporaryDirectory { directory in
            // Durability is not the point here: no fsync per commit keeps the test fast.
            let database = try Database(path: directory + "/shared.db") { try $0.execute("PRAGMA synchronous = OFF") }
            try database.access { db throws in
                try db.execute("CREATE TABLE counter (n INTEGER NOT NULL)")
                try db.execute("INSERT INTO counter VALUES (0)")
            }
            let failures = Locked<[String]>([])
            onThreads(8) { _ in
                for _ in 0..<50 {
                    do {
                        try database.transaction(.deferred) { db in
                            let n = try db.fetchValue("SELECT n FROM counter", as: Int.self) ?? -1
                            try db.execute("UPDATE counter SET n = ?", [n + 1])
                        }
                    } catch {
                        failures.update { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.value == [])
            #expect(try database.access { try $0.fetchValue("SELECT n FROM counter", as: Int.self) } == 400)
        }
    }
}
