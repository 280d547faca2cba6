// The SQLite ledger: one file (0600, WAL journal, synchronous=FULL) holding
//
//   deposits(token_id PRIMARY KEY, chain_hash, chain, issuer, value, value_hi, value_lo, unit,
//            deposit_time, recorded_at)
//   double_spends(token_id, chain_hash, chain, proof, signer, seen_at; PRIMARY KEY (token_id, chain_hash))
//
// `value` is decimal text for people; `value_hi`/`value_lo` (32-bit halves) are what `stats` sums,
// because SQLite's integers are signed 64-bit and a token's value is unsigned 64-bit.
// Every batch is one IMMEDIATE transaction, so processes sharing the file take turns.

import Foundation
import GRDB
import KeyhostCrypto

public final class SQLiteLedgerStore: LedgerStore, @unchecked Sendable {
    public let path: String
    // GRDB's queue serializes every use of the one connection, so sharing it across tasks is safe.
    private let queue: DatabaseQueue

    public var displayName: String { "sqlite:\(path)" }

    public init(path: String) throws {
        self.path = path
        try LedgerFile.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "keyhost ledger"
        configuration.prepareDatabase { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" else { throw LedgerError.store("ledger \(path): SQLite refused the WAL journal (journal mode is \(mode ?? "unknown"))") }
            // An accepted deposit must survive a power cut: fsync on every commit.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try Self.retryingBusy(path: path) { try DatabaseQueue(path: path, configuration: configuration) }
        try Self.retryingBusy(path: path) {
            try self.queue.inTransaction(.immediate) { db in
                try db.execute(sql: Self.schema)
                return .commit
            }
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

    /// Opening a new file switches it to WAL under an exclusive lock that SQLite's busy handler does
    /// not wait for: processes opening the same new ledger at once wait here instead.
    @discardableResult
    private static func retryingBusy<T>(path: String, _ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline {
                usleep(20_000)
            } catch {
                throw wrap(error, path: path, operation: "open the ledger")
            }
        }
    }

    public func record<Proof: Sendable>(
        _ deposits: [DepositRecord],
        conflict: (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> [StoreOutcome<Proof>] {
        let now = Int64(Date().timeIntervalSince1970)
        do {
            return try queue.inTransactionReturning { db in
                try deposits.map { deposit in
                    try db.execute(
                        sql: """
                            INSERT INTO deposits (token_id, chain_hash, chain, issuer, value, value_hi, value_lo, unit, deposit_time, recorded_at)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token_id) DO NOTHING
                            """,
                        arguments: [
                            Data(deposit.tokenID), Data(deposit.chainHash), Data(deposit.chain), Data(deposit.issuer), String(deposit.value),
                            Int64(deposit.value >> 32), Int64(deposit.value & 0xFFFF_FFFF), deposit.unit, deposit.depositTime, now,
                        ])
                    if db.changesCount == 1 { return .accepted }
                    guard let row = try Row.fetchOne(db, sql: "SELECT chain_hash, chain FROM deposits WHERE token_id = ?", arguments: [Data(deposit.tokenID)]) else {
                        throw LedgerError.store("ledger \(path): token \(Hex.encode(deposit.tokenID)) was neither inserted nor found")
                    }
                    let recordedHash: Data = row["chain_hash"]
                    if [UInt8](recordedHash) == deposit.chainHash { return .alreadyDeposited }
                    let recordedChain: Data = row["chain"]
                    let proof = try conflict(deposit, [UInt8](recordedChain))
                    try db.execute(
                        sql: """
                            INSERT INTO double_spends (token_id, chain_hash, chain, proof, signer, seen_at)
                            VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (token_id, chain_hash) DO NOTHING
                            """,
                        arguments: [Data(deposit.tokenID), Data(deposit.chainHash), Data(deposit.chain), Data(proof.encodedProof), Data(proof.signer), now])
                    return .doubleSpend(proof.proof)
                }
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "record the deposit")
        }
    }

    public func stats() async throws -> LedgerStats { try readStats() }

    // GRDB's async read would need a Sendable closure; this store's reads are short and local.
    private func readStats() throws -> LedgerStats {
        do {
            return try queue.read { db in
                var stats = LedgerStats(tokens: 0, totals: [:], tokensByUnit: [:], doubleSpends: 0)
                for row in try Row.fetchAll(db, sql: "SELECT unit, count(*) AS n, sum(value_hi) AS hi, sum(value_lo) AS lo FROM deposits GROUP BY unit") {
                    let unit: String = row["unit"]
                    let count: Int = row["n"]
                    let hi: Int64 = row["hi"]
                    let lo: Int64 = row["lo"]
                    stats.tokens += count
                    stats.tokensByUnit[unit] = count
                    stats.totals[unit] = SplitSum.decimal(high: UInt64(hi), low: UInt64(lo))
                }
                stats.doubleSpends = try Int.fetchOne(db, sql: "SELECT count(*) FROM double_spends") ?? 0
                return stats
            }
        } catch {
            throw Self.wrap(error, path: path, operation: "read the ledger's totals")
        }
    }

    public func close() async {
        try? queue.close()
    }

    static func wrap(_ error: Error, path: String, operation: String) -> Error {
        if error is LedgerError { return error }
        guard let error = error as? DatabaseError else { return LedgerError.store("ledger \(path): cannot \(operation): \(error)") }
        if error.resultCode == .SQLITE_BUSY {
            return LedgerError.store("ledger \(path): cannot \(operation): the ledger is locked by another connection; try again")
        }
        return LedgerError.store("ledger \(path): cannot \(operation): \(error.message ?? "SQLite error") (SQLite code \(error.extendedResultCode.rawValue))")
    }
}

extension DatabaseQueue {
    /// One IMMEDIATE transaction returning a value: the write lock is taken at BEGIN, so the
    /// batch never upgrades a read lock (which would deadlock with another writer).
    func inTransactionReturning<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }
}
