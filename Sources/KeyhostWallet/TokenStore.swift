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
// and `PRAGMA user_version` = the schema version (grdb_migrations lists the applied migrations, in
// the table GRDB kept them in, so wallets made while keyhost used GRDB open unchanged).
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

import KeyhostCrypto
import KeyhostSQLite
import KeyhostTokens

/// An open wallet file: its tokens, their runs, trusted issuers and settings.
///
/// One `TokenStore` per open wallet and per thread: it is not meant to be shared between threads
/// (open another store on the same file instead), though its one connection is serialized by
/// `Database` like any other. Any number of stores, in any number of processes, may open the same
/// file at once; exactly-once holds across all of them.
public final class TokenStore {
    /// The wallet file's path as given.
    public let path: String
    /// The one SQLite connection of this store.
    let database: Database

    /// How long a write waits for another process's write lock before giving up.
    static let busyTimeout: Duration = .seconds(5)

    /// Opens or creates the wallet at `path` (created 0600; refused if group or others can read it),
    /// brings its schema up to date, and resets runs whose process is gone (`reconcile()`).
    public init(path: String) throws {
        self.path = path
        try WalletFile.prepare(path)
        do {
            // Database retries this set-up while another process holds the lock that switching a
            // new wallet to WAL needs (the busy handler does not cover it).
            database = try Database(path: path, busyTimeout: Self.busyTimeout) { db in
                let mode = try db.fetchValue("PRAGMA journal_mode = WAL", as: String.self)
                guard mode == "wal" else {
                    throw WalletError.store("wallet \(path): SQLite refused the WAL journal (journal mode is \(mode ?? "unknown"))")
                }
                // Every committed run must survive a power cut: fsync on every commit. Writes that
                // may be lost (beginRun) lower it for their own transaction only.
                try db.execute("PRAGMA synchronous = FULL")
                // The schema's foreign keys are the state machine's last line of defence.
                try db.execute("PRAGMA foreign_keys = ON")
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "open the wallet")
        }
        try migrate()
        try reconcile()
    }

    /// The schema version of the open wallet (`PRAGMA user_version`).
    public func schemaVersion() throws -> Int {
        try read("read the schema version") { db in try db.fetchValue("PRAGMA user_version", as: Int.self) ?? 0 }
    }

    /// The schema version this code creates.
    public static var currentSchemaVersion: Int { Schema.version }

    private func migrate() throws {
        // The migrator checks and applies under one write lock, so processes creating the same
        // wallet at once do not both apply v1.
        do {
            try Schema.migrator.migrate(database)
        } catch {
            throw Self.wrap(error, path: path, operation: "create or upgrade the wallet's tables")
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
            try db.fetchValue("SELECT value FROM settings WHERE name = ?", [name], as: [UInt8].self)
        }
    }

    /// Sets setting `name` to `value`, or removes it when `value` is nil.
    public func setSetting(_ name: String, _ value: [UInt8]?) throws {
        try write("write setting '\(name)'") { db in
            if let value {
                try db.execute("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", [name, value])
            } else {
                try db.execute("DELETE FROM settings WHERE name = ?", [name])
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
    func write<T>(_ operation: String, durability: Durability = .full, _ body: (Connection) throws -> T) throws -> T {
        do {
            return try database.access { db in
                // Each write sets its own level, so a lowered level never leaks into a later commit.
                try db.execute("PRAGMA synchronous = \(durability.rawValue)")
                defer {
                    if durability != .full { try? db.execute("PRAGMA synchronous = FULL") }
                }
                return try db.transaction(.immediate, body)
            }
        } catch {
            throw Self.wrap(error, path: path, operation: operation)
        }
    }

    /// Runs `body` in a read transaction (one consistent snapshot).
    func read<T>(_ operation: String, _ body: (Connection) throws -> T) throws -> T {
        do {
            return try database.transaction(.deferred, body)
        } catch {
            throw Self.wrap(error, path: path, operation: operation)
        }
    }

    /// A wallet error for any error from SQLite, naming the wallet and the operation.
    static func wrap(_ error: Error, path: String, operation: String) -> WalletError {
        if let error = error as? WalletError { return error }
        guard let error = error as? SQLiteError else {
            return .store("wallet \(path): cannot \(operation): \(error)")
        }
        if error.isBusy {
            return .store("wallet \(path): cannot \(operation): the wallet is locked by another connection (SQLite code \(error.extendedCode)); try again")
        }
        return .store("wallet \(path): cannot \(operation): \(error)")
    }

    /// A short form of a token id for messages: enough hex to find it again with `find(idPrefix:)`.
    static func short(_ id: [UInt8]) -> String { Hex.encode(id.prefix(6)) + (id.count > 6 ? "…" : "") }
}
