import Foundation
import KeyhostSQLite
import KeyhostTestSupport
import Testing

/// Every Swift type goes in as what SQLite stores and comes back unchanged.
@Suite struct ValueTests {
    @Test func everyTypeRoundTripsWithItsStorageClass() throws {
        try withDatabase { database in
            try database.access { db throws in
                try db.execute("CREATE TABLE t (v)")
                let text = "a\u{0}b – ünï 🔑\u{0}"
                let blob: [UInt8] = [0, 1, 0, 255, 0]
                let values: [(any SQLBindable)?] = [
                    nil, Int64.min, Int64.max, Int(-7), Int32.max, true, false, 2.5, "", text, [UInt8](), blob, SQLValue.null,
                ]
                for value in values { try db.execute("INSERT INTO t (v) VALUES (?)", [value]) }
                let rows = try db.fetchAll("SELECT v, typeof(v) AS type, length(CAST(v AS BLOB)) AS size FROM t ORDER BY rowid")
                #expect(try rows.map { row -> String in try row["type"] } == [
                    "null", "integer", "integer", "integer", "integer", "integer", "integer", "real", "text", "text", "blob", "blob", "null",
                ])
                #expect(try rows[1]["v"] as Int64 == .min)
                #expect(try rows[2]["v"] as Int64 == .max)
                #expect(try rows[3]["v"] as Int == -7)
                #expect(try rows[4]["v"] as Int32 == .max)
                #expect(try rows[5]["v"] as Bool == true)
                #expect(try rows[6]["v"] as Bool == false)
                #expect(try rows[7]["v"] as Double == 2.5)
                #expect(try rows[8]["v"] as String == "")
                // Embedded NULs are kept on the way in and out: SQLite counts every byte.
                #expect(try rows[9]["v"] as String == text)
                #expect(try rows[9]["size"] as Int == text.utf8.count)
                // An empty blob is a blob, not NULL.
                #expect(try rows[10]["v"] as [UInt8] == [])
                #expect(try rows[10]["v"] as [UInt8]? == [])
                #expect(try rows[11]["v"] as [UInt8] == blob)
                #expect(try rows[0]["v"] as [UInt8]? == nil)
                #expect(try rows[0]["v"] as Int64? == nil)
                #expect(rows[12].values[0] == .null)
                #expect(try rows[11][0] as SQLValue == .blob(blob))
            }
        }
    }

    @Test func columnsAreFoundByNameIgnoringASCIICaseAndByIndex() throws {
        try withDatabase { database in
            let row = try #require(try database.access { try $0.fetchOne("SELECT 1 AS One, 'x' AS two") })
            #expect(row.columns == ["One", "two"])
            #expect(try row["one"] as Int == 1)
            #expect(try row["TWO"] as String == "x")
            #expect(try row[1] as String == "x")
        }
    }

    @Test func aMissingColumnOrAWrongTypeThrowsAndNamesTheColumnNotTheValue() throws {
        try withDatabase { database in
            let row = try #require(try database.access { try $0.fetchOne("SELECT ? AS name, NULL AS gone, 3000000000 AS big", ["secret-text"]) })
            let missing = try #require(thrown(SQLiteError.self) { try row["nope"] as Int })
            #expect(missing.code == SQLiteError.misuse)
            #expect(missing.message.contains("'nope'") && missing.message.contains("name, gone, big"))
            let wrong = try #require(thrown(SQLiteError.self) { try row["name"] as Int64 })
            #expect(wrong.code == SQLiteError.mismatch)
            #expect(wrong.message.contains("'name'") && wrong.message.contains("TEXT"))
            #expect(!wrong.description.contains("secret-text"))
            // NULL is not an Int; it is an Int?.
            #expect(thrown(SQLiteError.self) { try row["gone"] as Int }?.code == SQLiteError.mismatch)
            #expect(try row["gone"] as Int? == nil)
            // Out of Int32's range is refused, never truncated.
            #expect(thrown(SQLiteError.self) { try row["big"] as Int32 }?.code == SQLiteError.mismatch)
            #expect(try row["big"] as Int64 == 3_000_000_000)
            #expect(thrown(SQLiteError.self) { try row[3] as Int }?.code == SQLiteError.misuse)
        }
    }

    @Test func fetchValueReadsTheFirstColumnOfTheFirstRow() throws {
        try withDatabase { database in
            try database.access { db throws in
                #expect(try db.fetchValue("SELECT ? + 1", [41], as: Int.self) == 42)
                #expect(try db.fetchValue("SELECT NULL", as: Int.self) == nil)
                #expect(try db.fetchValue("SELECT 1 WHERE 0", as: Int.self) == nil)
            }
        }
    }
}
