// The PostgreSQL ledger: the same two tables as the SQLite one, shared by any number of ledger
// servers. Each batch is one READ COMMITTED transaction of `INSERT … ON CONFLICT DO NOTHING
// RETURNING` per deposit, then a read of the winning row when nothing was inserted. A concurrent
// insert of the same token id makes ours wait for that transaction: if it commits we insert
// nothing and read its row (a new statement sees the commit), if it aborts our insert goes ahead.
// Deposits are applied in token-id order so two batches never wait on each other in a cycle.

import Foundation
import KeyhostLedger
import KeyhostCrypto
import PostgresNIO

public final class PostgresLedgerStore: LedgerStore, @unchecked Sendable {
    public let location: PostgresLocation
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger = Logger(label: "keyhost.ledger.postgres")

    public var displayName: String { location.display }

    /// Connects (a pool of up to `maxConnections`) and creates the tables when missing.
    public init(location: PostgresLocation, maxConnections: Int = 8) async throws {
        self.location = location
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = .seconds(10)
        var quiet = Logger(label: "keyhost.ledger.postgres.pool")
        quiet.logLevel = .critical
        let client = PostgresClient(configuration: configuration, backgroundLogger: quiet)
        self.client = client
        runTask = Task { await client.run() }
        do {
            let display = location.display
            try await withDeadline(.seconds(15), error: LedgerError.store("\(display): cannot connect within 15 s; is the server running and reachable, and are the user and database right?")) {
                try await self.createSchema()
            }
        } catch {
            runTask.cancel()
            throw error
        }
    }

    private func createSchema() async throws {
        try await transaction("create the ledger's tables") { connection in
            // Servers starting together would race on CREATE TABLE IF NOT EXISTS (it is not atomic
            // against itself); a transaction-scoped advisory lock makes them take turns.
            try await connection.query("SELECT pg_advisory_xact_lock(7419001)", logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS deposits (
                    token_id bytea PRIMARY KEY CHECK (length(token_id) = 32),
                    chain_hash bytea NOT NULL CHECK (length(chain_hash) = 32),
                    chain bytea NOT NULL,
                    issuer bytea NOT NULL CHECK (length(issuer) = 32),
                    value numeric(20, 0) NOT NULL CHECK (value >= 0),
                    unit text NOT NULL,
                    deposit_time bigint NOT NULL,
                    recorded_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS double_spends (
                    token_id bytea NOT NULL REFERENCES deposits (token_id),
                    chain_hash bytea NOT NULL,
                    chain bytea NOT NULL,
                    proof bytea NOT NULL,
                    signer bytea NOT NULL,
                    seen_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (token_id, chain_hash)
                )
                """, logger: self.logger)
        }
    }

    public func record<Proof: Sendable>(
        _ deposits: [DepositRecord],
        conflict: (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> [StoreOutcome<Proof>] {
        let order = deposits.indices.sorted { a, b in
            deposits[a].tokenID.lexicographicallyPrecedes(deposits[b].tokenID) || (deposits[a].tokenID == deposits[b].tokenID && a < b)
        }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await transaction("record the deposit") { connection in
                    var outcomes = [StoreOutcome<Proof>?](repeating: nil, count: deposits.count)
                    for index in order {
                        outcomes[index] = try await self.apply(deposits[index], on: connection, conflict: conflict)
                    }
                    return outcomes.map { $0! }
                }
            } catch let error as PSQLError where Self.isRetryable(error) && attempt < 4 {
                // A deadlock or serialization failure rolled the whole batch back: nothing was
                // recorded, so doing it again is safe.
                continue
            }
        }
    }

    private func apply<Proof: Sendable>(
        _ deposit: DepositRecord, on connection: PostgresConnection,
        conflict: (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> StoreOutcome<Proof> {
        let id = Data(deposit.tokenID)
        let inserted = try await connection.query("""
            INSERT INTO deposits (token_id, chain_hash, chain, issuer, value, unit, deposit_time)
            VALUES (\(id), \(Data(deposit.chainHash)), \(Data(deposit.chain)), \(Data(deposit.issuer)), \(String(deposit.value))::numeric, \(deposit.unit), \(deposit.depositTime))
            ON CONFLICT (token_id) DO NOTHING RETURNING 1
            """, logger: logger)
        var insertedRows = 0
        for try await _ in inserted { insertedRows += 1 }
        if insertedRows == 1 { return .accepted }
        var recorded: (Data, Data)?
        for try await row in try await connection.query("SELECT chain_hash, chain FROM deposits WHERE token_id = \(id)", logger: logger).decode((Data, Data).self) {
            recorded = row
        }
        guard let (hash, chain) = recorded else {
            throw LedgerError.store("\(displayName): token \(Hex.encode(deposit.tokenID)) was neither inserted nor found")
        }
        if [UInt8](hash) == deposit.chainHash { return .alreadyDeposited }
        let proof = try conflict(deposit, [UInt8](chain))
        try await connection.query("""
            INSERT INTO double_spends (token_id, chain_hash, chain, proof, signer)
            VALUES (\(id), \(Data(deposit.chainHash)), \(Data(deposit.chain)), \(Data(proof.encodedProof)), \(Data(proof.signer)))
            ON CONFLICT (token_id, chain_hash) DO NOTHING
            """, logger: logger)
        return .doubleSpend(proof.proof)
    }

    public func stats() async throws -> LedgerStats {
        do {
            var stats = LedgerStats(tokens: 0, totals: [:], tokensByUnit: [:], doubleSpends: 0)
            let rows = try await client.query("SELECT unit, count(*), sum(value)::text FROM deposits GROUP BY unit", logger: logger)
            for try await (unit, count, total) in rows.decode((String, Int, String).self) {
                stats.tokens += count
                stats.tokensByUnit[unit] = count
                stats.totals[unit] = total
            }
            for try await count in try await client.query("SELECT count(*) FROM double_spends", logger: logger).decode(Int.self) {
                stats.doubleSpends = count
            }
            return stats
        } catch {
            throw wrap(error, operation: "read the ledger's totals")
        }
    }

    public func close() async {
        runTask.cancel()
        _ = await runTask.value
    }

    /// `body` in one transaction on one pooled connection; rolled back when it throws.
    private func transaction<T: Sendable>(_ operation: String, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: self.logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: self.logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        } catch let error as PSQLError where Self.isRetryable(error) {
            throw error
        } catch {
            throw wrap(error, operation: operation)
        }
    }

    static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    /// A ledger error naming the database and what failed; the server's own message where it sent
    /// one (PSQLError's description hides it), never the password.
    func wrap(_ error: Error, operation: String) -> Error {
        if error is LedgerError { return error }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return LedgerError.store("\(displayName): cannot \(operation): \(message)\(state)")
            }
            return LedgerError.store("\(displayName): cannot \(operation): \(Self.describe(error.code)); is the server running and reachable?")
        }
        return LedgerError.store("\(displayName): cannot \(operation): \(error)")
    }

    private static func describe(_ code: PSQLError.Code) -> String {
        switch code {
        case .connectionError: return "cannot connect"
        case .serverClosedConnection: return "the server closed the connection"
        case .poolClosed: return "the connection pool is closed"
        default: return "database error \(code)"
        }
    }
}

extension LedgerLocation {
    /// Opens the store in this process (creating its tables when missing): what `keyhost-ledger`
    /// does; keyhost reaches PostgreSQL through it (`TokenLedgers.open`).
    public func open() async throws -> any LedgerStore {
        switch self {
        case .sqlite(let path): return try SQLiteLedgerStore(path: path)
        case .postgres(let location): return try await PostgresLedgerStore(location: location)
        }
    }
}
