// The SQLite ledger: one file (0600, WAL journal, synchronous=FULL) holding
//
//   deposits(token_id PRIMARY KEY, chain_hash, chain, issuer, value, value_hi, value_lo, unit,
//            deposit_time, recorded_at)
//   double_spends(token_id, chain_hash, chain, proof, signer, seen_at; PRIMARY KEY (token_id, chain_hash))
//
// `value` is decimal text for people; `value_hi`/`value_lo` (32-bit halves) are what `stats` sums,
// because SQLite's integers are signed 64-bit and a token's value is unsigned 64-bit.
// Every batch is one IMMEDIATE transaction, so processes sharing the file take turns.

#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto
import KeyhostSQLite

public final class SQLiteLedgerStore: LedgerStore, Sendable {
    public let path: String
    // The server shares one store between its tasks: Database serializes every use of the one
    // connection, so that is safe (and a batch's transaction is never interleaved with another's).
    private let database: Database

    public var displayName: String { "sqlite:\(path)" }

    /// Opens (creating when missing) the ledger at `path`; `readOnly` (a ledger that only answers stats) opens
    /// an existing ledger for reading and never creates or changes anything, not even the schema.
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        try LedgerFile.prepare(path, create: !readOnly)
        if readOnly {
            do {
                database = try Database(path: path, mode: .readOnly, busyTimeout: .seconds(10)) { db in
                    let tables = try db.fetchValue("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('deposits', 'double_spends')",
                                                   as: Int64.self)
                    guard tables == 2 else { throw LedgerError(kind: "location", message: "sqlite:\(path) is not a keyhost ledger (it has no deposits table)") }
                }
            } catch {
                throw Self.wrap(error, path: path, operation: "open the ledger")
            }
            return
        }
        do {
            // Database retries this set-up while another process holds the lock that switching a
            // new ledger to WAL needs (the busy handler does not cover it); every step is repeatable.
            database = try Database(path: path, busyTimeout: .seconds(10)) { db in
                let mode = try db.fetchValue("PRAGMA journal_mode = WAL", as: String.self)
                guard mode == "wal" else { throw LedgerError.store("ledger \(path): SQLite refused the WAL journal (journal mode is \(mode ?? "unknown"))") }
                // An accepted deposit must survive a power cut: fsync on every commit.
                try db.execute("PRAGMA synchronous = FULL")
                try db.execute("PRAGMA foreign_keys = ON")
                try db.transaction(.immediate) { try $0.executeScript(Self.schema) }
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "open the ledger")
        }
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS deposits (
            token_id BLOB PRIMARY KEY NOT NULL CHECK (length(token_id) = 32),
            chain_hash BLOB NOT NULL CHECK (length(chain_hash) = 32),
            chain BLOB NOT NULL,
            issuer BLOB NOT NULL CHECK (length(issuer) = 32),
            value TEXT NOT NULL,
            value_hi INTEGER NOT NULL,
            value_lo INTEGER NOT NULL,
            unit TEXT NOT NULL,
            deposit_time INTEGER NOT NULL,
            recorded_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS double_spends (
            token_id BLOB NOT NULL REFERENCES deposits (token_id),
            chain_hash BLOB NOT NULL,
            chain BLOB NOT NULL,
            proof BLOB NOT NULL,
            signer BLOB NOT NULL,
            seen_at INTEGER NOT NULL,
            PRIMARY KEY (token_id, chain_hash)
        ) WITHOUT ROWID;
        """

    public func record<Proof: Sendable>(
        _ deposits: [DepositRecord],
        conflict: @escaping @Sendable (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> [StoreOutcome<Proof>] {
        let now = Int64(time(nil))
        do {
            // IMMEDIATE: the write lock is taken at BEGIN, so the batch never upgrades a read lock
            // (which would deadlock with another writer).
            return try database.transaction(.immediate) { db in
                try deposits.map { deposit in
                    try db.execute(
                        """
                        INSERT INTO deposits (token_id, chain_hash, chain, issuer, value, value_hi, value_lo, unit, deposit_time, recorded_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token_id) DO NOTHING
                        """,
                        [
                            deposit.tokenID, deposit.chainHash, deposit.chain, deposit.issuer, String(deposit.value),
                            Int64(deposit.value >> 32), Int64(deposit.value & 0xFFFF_FFFF), deposit.unit, deposit.depositTime, now,
                        ])
                    if db.changes == 1 { return .accepted }
                    guard let row = try db.fetchOne("SELECT chain_hash, chain FROM deposits WHERE token_id = ?", [deposit.tokenID]) else {
                        throw LedgerError.store("ledger \(path): token \(Hex.encode(deposit.tokenID)) was neither inserted nor found")
                    }
                    if try row["chain_hash"] == deposit.chainHash { return .alreadyDeposited }
                    let proof = try conflict(deposit, row["chain"])
                    try db.execute(
                        """
                        INSERT INTO double_spends (token_id, chain_hash, chain, proof, signer, seen_at)
                        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (token_id, chain_hash) DO NOTHING
                        """,
                        [deposit.tokenID, deposit.chainHash, deposit.chain, proof.encodedProof, proof.signer, now])
                    return .doubleSpend(proof.proof)
                }
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "record the deposit")
        }
    }

    public func recorded(_ chains: [ChainKey]) async throws -> [RecordedChain?] {
        do {
            return try database.transaction(.deferred) { db in
                try chains.map { key in
                    // The deposit's chain is read only for a recorded double spend, whose proof is made from it.
                    guard let row = try db.fetchOne(
                        """
                        SELECT d.chain_hash = ?2 AS same, CASE WHEN s.chain_hash IS NULL THEN NULL ELSE d.chain END AS deposit
                        FROM deposits d LEFT JOIN double_spends s ON s.token_id = d.token_id AND s.chain_hash = ?2
                        WHERE d.token_id = ?1
                        """, [key.tokenID, key.chainHash])
                    else { return nil }
                    let same: Int = try row["same"]
                    if same == 1 { return .deposited }
                    let deposit: [UInt8]? = try row["deposit"]
                    return deposit.map { .doubleSpend(deposit: $0) }
                }
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "look up deposited chains")
        }
    }

    public func stats() async throws -> LedgerStats { try readStats() }

    // This store's reads are short and local: done on the calling task, under the database's lock.
    private func readStats() throws -> LedgerStats {
        do {
            return try database.transaction(.deferred) { db in
                var stats = LedgerStats(tokens: 0, totals: [:], tokensByUnit: [:], doubleSpends: 0)
                for row in try db.fetchAll("SELECT unit, count(*) AS n, sum(value_hi) AS hi, sum(value_lo) AS lo FROM deposits GROUP BY unit") {
                    let unit: String = try row["unit"]
                    let count: Int = try row["n"]
                    let hi: Int64 = try row["hi"]
                    let lo: Int64 = try row["lo"]
                    stats.tokens += count
                    stats.tokensByUnit[unit] = count
                    // Both halves are stored non-negative; a negative sum is an edited file, not a total.
                    guard let high = UInt64(exactly: hi), let low = UInt64(exactly: lo) else {
                        throw LedgerError.store("ledger \(path): the values of unit \(unit.prefix(40).debugDescription) sum to a negative number (fields deposits.value_hi/value_lo): the file is damaged")
                    }
                    stats.totals[unit] = SplitSum.decimal(high: high, low: low)
                }
                stats.doubleSpends = try db.fetchValue("SELECT count(*) FROM double_spends", as: Int.self) ?? 0
                return stats
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "read the ledger's totals")
        }
    }

    public func close() async {
        database.close()
    }

    static func wrap(_ error: Error, path: String, operation: String) -> Error {
        if error is LedgerError { return error }
        guard let error = error as? SQLiteError else { return LedgerError.store("ledger \(path): cannot \(operation): \(error)") }
        if error.isBusy {
            return LedgerError.store("ledger \(path): cannot \(operation): the ledger is locked by another connection; try again")
        }
        return LedgerError.store("ledger \(path): cannot \(operation): \(error)")
    }
}
