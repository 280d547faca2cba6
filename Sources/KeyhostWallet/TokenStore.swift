// KeyhostWallet: the wallet file of one-time tokens.
//
// A wallet is one SQLite file (mode 0600, WAL journal, synchronous=FULL) holding:
//
//   settings(name, value)               wallet metadata, a small key/value table
//   trusted_issuers(issuer, trusted_at) x-only keys whose tokens the user accepts
//   tokens(id, encoded, issuer, imported_at, state,
//          run_id, owner_pid, owner_start, owner_boot, pending_since,
//          spent_at, receipt_id)        one row per token, keyed by the token id
//   runs(token_id, run_id, receipt_id, receipt, effects,
//        owner_pid, started_at, spent_at) the one committed run of each SPENT token
//
// and `PRAGMA user_version` = the schema version (GRDB's grdb_migrations lists the migrations).
//
// The state machine of a token:
//
//   import ──▶ HELD ──beginRun──▶ PENDING ──commitRun──▶ SPENT
//                ▲                   │
//                └──abortRun/reconcile┘
//
// The point is exactly-once: a token runs at most once, and its effects and its invalidation are
// committed in one transaction. Running a program takes time and happens outside any database
// transaction (the worker must not hold the write lock while Lua runs), so between "this token is
// runnable" and "this token is spent" there must be a state that other processes can see: PENDING,
// as Cashu's proof states have it for proofs in flight. PENDING is taken by one conditional UPDATE
// (`WHERE state = 'HELD'`) inside an IMMEDIATE transaction, so of any number of processes and
// stores racing for a token exactly one gets it; the others read who holds it and are refused.
// A PENDING row names its owner process (pid, start time, boot id): when that process is gone the
// run can never commit, and `reconcile()` (run on every open, and by `beginRun` for the token it
// wants) puts the token back to HELD. Nothing is ever checked in one transaction and acted on in
// another.
//
// The schema enforces the rest: a SPENT token has a `runs` row (foreign key on receipt_id), a
// `runs` row belongs to a SPENT token (foreign key on (token_id, 'SPENT'), checked at commit),
// runs are never changed or deleted, and a SPENT token never leaves SPENT (triggers).

import Foundation
import GRDB
import KeyhostCrypto
import KeyhostTokens

/// An open wallet file: its tokens, their runs, trusted issuers and settings.
///
/// One `TokenStore` per open wallet and per thread: it is not meant to be shared between threads
/// (open another store on the same file instead). Any number of stores, in any number of
/// processes, may open the same file at once; exactly-once holds across all of them.
public final class TokenStore {
    /// The wallet file's path as given.
    public let path: String
    /// The one SQLite connection of this store.
    let queue: DatabaseQueue

    /// How long a write waits for another process's write lock before giving up.
    static let busyTimeout: Double = 5

    /// Opens or creates the wallet at `path` (created 0600; refused if group or others can read it),
    /// brings its schema up to date, and resets runs whose process is gone (`reconcile()`).
    public init(path: String) throws {
        self.path = path
        try WalletFile.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.label = "keyhost wallet"
        configuration.prepareDatabase { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" else {
                throw WalletError.store("wallet \(path): SQLite refused the WAL journal (journal mode is \(mode ?? "unknown"))")
            }
            // Every committed run must survive a power cut: fsync on every commit. Writes that
            // may be lost (beginRun) lower it for their own transaction only.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try Self.open(path: path, configuration: configuration)
        try migrate()
        try reconcile()
    }

    /// The connection, retrying while another connection holds the lock that switching to WAL needs.
    private static func open(path: String, configuration: Configuration) throws -> DatabaseQueue {
        // SQLite's busy handler only runs when a transaction waits for a lock. Switching a new
        // wallet's journal to WAL takes an exclusive lock without it, so processes creating the
        // same wallet at once are refused at once with SQLITE_BUSY: wait here instead, as long as
        // a transaction would.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int(busyTimeout * 1000)))
        while true {
            do {
                return try DatabaseQueue(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && clock.now < deadline {
                usleep(20_000)
            } catch {
                throw wrap(error, path: path, operation: "open the wallet")
            }
        }
    }

    /// The schema version of the open wallet (`PRAGMA user_version`).
    public func schemaVersion() throws -> Int {
        try read("read the schema version") { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
    }

    /// The schema version this code creates.
    public static var currentSchemaVersion: Int { Schema.version }

    private func migrate() throws {
        let migrator = Schema.migrator
        // GRDB reads the applied migrations outside the transaction that applies one, so two
        // processes creating the same wallet at once can both try v1; the loser's transaction rolls
        // back with "table exists". It then finds the schema complete, which is all it wanted.
        var attempt = 0
        while true {
            do {
                try migrator.migrate(queue)
                break
            } catch {
                attempt += 1
                let complete = (try? queue.read { db in try migrator.hasCompletedMigrations(db) }) ?? false
                if complete { break }
                if attempt < 3 { continue }
                throw Self.wrap(error, path: path, operation: "create or upgrade the wallet's tables")
            }
        }
        let version = try schemaVersion()
        guard version <= Schema.version else {
            throw WalletError.store("wallet \(path) has schema version \(version), newer than this keyhost knows (\(Schema.version)); upgrade keyhost")
        }
    }

    // MARK: - Settings

    /// The value of setting `name`, or nil if it is not set.
    public func setting(_ name: String) throws -> [UInt8]? {
        try read("read setting '\(name)'") { db in
            try Row.fetchOne(db, sql: "SELECT value FROM settings WHERE name = ?", arguments: [name]).map { Self.bytes($0, "value") }
        }
    }

    /// Sets setting `name` to `value`, or removes it when `value` is nil.
    public func setSetting(_ name: String, _ value: [UInt8]?) throws {
        try write("write setting '\(name)'") { db in
            if let value {
                try db.execute(
                    sql: "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    arguments: [name, Self.blob(value)])
            } else {
                try db.execute(sql: "DELETE FROM settings WHERE name = ?", arguments: [name])
            }
        }
    }

    // MARK: - Transactions and errors

    /// How much a write transaction's commit waits for the disk.
    enum Durability: String {
        /// fsync at every commit: survives a power cut.
        case full = "FULL"
        /// In WAL mode: survives a crash of the process, may be lost on a power cut.
        case normal = "NORMAL"
    }

    /// Runs `body` in one IMMEDIATE transaction: the write lock is taken at BEGIN (waiting up to the
    /// busy timeout), so nothing read inside can change before the commit.
    func write<T>(_ operation: String, durability: Durability = .full, _ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.writeWithoutTransaction { db in
                // Each write sets its own level, so a lowered level never leaks into a later commit.
                try db.execute(sql: "PRAGMA synchronous = \(durability.rawValue)")
                defer {
                    if durability != .full { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.wrap(error, path: path, operation: operation)
        }
    }

    /// Runs `body` in a read transaction (one consistent snapshot).
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch {
            throw Self.wrap(error, path: path, operation: operation)
        }
    }

    /// A wallet error for any error from GRDB or SQLite, naming the wallet and the operation.
    static func wrap(_ error: Error, path: String, operation: String) -> WalletError {
        if let error = error as? WalletError { return error }
        guard let error = error as? DatabaseError else {
            return .store("wallet \(path): cannot \(operation): \(error)")
        }
        if error.resultCode == .SQLITE_BUSY {
            return .store("wallet \(path): cannot \(operation): the wallet is locked by another connection (SQLite code \(error.extendedResultCode.rawValue)); try again")
        }
        let detail = error.message ?? "SQLite error"
        return .store("wallet \(path): cannot \(operation): \(detail) (SQLite code \(error.extendedResultCode.rawValue))")
    }

    // MARK: - Column conversions

    /// Bytes as an SQLite blob (GRDB stores `Data` as BLOB; [UInt8] has no conversion of its own).
    static func blob(_ bytes: [UInt8]) -> Data { Data(bytes) }

    /// A blob column as bytes (empty for NULL).
    static func bytes(_ row: Row, _ column: String) -> [UInt8] {
        let data: Data? = row[column]
        return data.map { [UInt8]($0) } ?? []
    }

    /// A short form of a token id for messages: enough hex to find it again with `find(idPrefix:)`.
    static func short(_ id: [UInt8]) -> String { Hex.encode(id.prefix(6)) + (id.count > 6 ? "…" : "") }
}
