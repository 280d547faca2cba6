import Foundation
import KeyhostSQLite
import KeyhostTestSupport
import Testing
@testable import KeyhostWallet

/// The wallet file itself: permissions, journal and sync settings, schema, and how failures read.
@Suite struct WalletFileTests {
    @Test func aNewWalletIsPrivateAndItsWALIsToo() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let store = try TokenStore(path: path)
            #expect(try fileMode(path) == 0o600)
            _ = try store.importToken(Fixture.token(Fixture.id([1])), now: 1)
            // SQLite gives the WAL and shared-memory files the database file's mode.
            #expect(try fileMode(path + "-wal") == 0o600)
            #expect(try fileMode(path + "-shm") == 0o600)
        }
    }

    @Test func aWalletOthersCanReadIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            _ = try TokenStore(path: path)
            #expect(chmod(path, 0o644) == 0)
            let error = try #require(walletError { try TokenStore(path: path) })
            #expect(error.kind == "permissions")
            #expect(error.message.contains("chmod 600 \(path)"))
            #expect(error.message.contains("0644"))
            #expect(chmod(path, 0o600) == 0)
            _ = try TokenStore(path: path)
        }
    }

    @Test func theConnectionIsWALFullSyncWithForeignKeysAndABusyTimeout() throws {
        try withWallet { store in
            let (journal, synchronous, foreignKeys, busyTimeout) = try store.database.access { db in
                (
                    try db.fetchValue("PRAGMA journal_mode", as: String.self), try db.fetchValue("PRAGMA synchronous", as: Int.self),
                    try db.fetchValue("PRAGMA foreign_keys", as: Int.self), try db.fetchValue("PRAGMA busy_timeout", as: Int.self)
                )
            }
            #expect(journal == "wal")
            #expect(synchronous == 2)  // FULL
            #expect(foreignKeys == 1)
            #expect(busyTimeout == 5000)
            #expect(try store.schemaVersion() == 2)
            #expect(TokenStore.currentSchemaVersion == 2)
            // beginRun and abortRun lower synchronous for their own transaction only.
            let id = Fixture.id([2])
            _ = try store.importToken(Fixture.token(id), now: 1)
            let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
            #expect(try store.database.access { try $0.fetchValue("PRAGMA synchronous", as: Int.self) } == 2)
            try store.abortRun(run)
            #expect(try store.database.access { try $0.fetchValue("PRAGMA synchronous", as: Int.self) } == 2)
        }
    }

    /// Processes that create the same new wallet at once all end up with one complete schema
    /// (each waits for the lock switching to WAL needs, and migrations are applied once, under the write lock).
    @Test func storesCreatingTheSameNewWalletAtOnceAllOpenIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let results = Locked<[String]>([])
            let gate = DispatchSemaphore(value: 0), done = DispatchGroup()
            for _ in 0..<8 {
                done.enter()
                Thread {
                    gate.wait()
                    let outcome = walletError { try TokenStore(path: path).schemaVersion() }.map(\.message) ?? "ok"
                    results.update { $0.append(outcome) }
                    done.leave()
                }.start()
            }
            for _ in 0..<8 { gate.signal() }
            done.wait()
            let mode = try fileMode(path)
            #expect(results.value == Array(repeating: "ok", count: 8))
            #expect(mode == 0o600)
        }
    }

    @Test func reopeningKeepsEverythingAndDoesNotMigrateAgain() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            try TokenStore(path: path).setSetting("name", Array("mine".utf8))
            let again = try TokenStore(path: path)
            #expect(try again.setting("name") == Array("mine".utf8))
            #expect(try again.schemaVersion() == 2)
        }
    }

    @Test func failuresNameTheWalletAndTheOperation() throws {
        try withTemporaryDirectory { directory in
            let missing = directory + "/no/such/dir/wallet.khw"
            let error = try #require(walletError { try TokenStore(path: missing) })
            #expect(error.kind == "store")
            #expect(error.message.contains(missing))

            let garbage = directory + "/garbage.khw"
            #expect(FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x41, count: 4096), attributes: [.posixPermissions: 0o600]))
            let notSQLite = try #require(walletError { try TokenStore(path: garbage) })
            #expect(notSQLite.kind == "store")
            #expect(notSQLite.message.contains(garbage))
            #expect(notSQLite.message.contains("not a database"))
        }
    }

    @Test func settingsAreSetReplacedAndRemoved() throws {
        try withWallet { store in
            #expect(try store.setting("holder") == nil)
            try store.setSetting("holder", [1, 2, 3])
            try store.setSetting("holder", [4])
            #expect(try store.setting("holder") == [4])
            try store.setSetting("empty", [])
            #expect(try store.setting("empty") == [])
            try store.setSetting("holder", nil)
            #expect(try store.setting("holder") == nil)
        }
    }

    @Test func timesAreUTCISO8601() {
        #expect(UTCTime.iso8601(0) == "1970-01-01T00:00:00Z")
        #expect(UTCTime.iso8601(1_795_482_123) == "2026-11-24T01:02:03Z")
        #expect(UTCTime.iso8601(951_868_799) == "2000-02-29T23:59:59Z")
        #expect(UTCTime.iso8601(-1) == "1969-12-31T23:59:59Z")
        #expect(UTCTime.iso8601(4_107_542_400) == "2100-03-01T00:00:00Z")
    }
}
