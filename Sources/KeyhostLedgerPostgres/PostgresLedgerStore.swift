// The PostgreSQL ledger: the same two tables as the SQLite one, shared by any number of ledger
// servers. Each batch is one READ COMMITTED transaction of `INSERT … ON CONFLICT DO NOTHING
// RETURNING` per deposit, then a read of the winning row when nothing was inserted. A concurrent
// insert of the same token id makes ours wait for that transaction: if it commits we insert
// nothing and read its row (a new statement sees the commit), if it aborts our insert goes ahead.
// Deposits are applied in token-id order so two batches never wait on each other in a cycle.

import Foundation
import KeyhostLedger
import KeyhostLedgerDeadline
import KeyhostCrypto
import PostgresNIO
import Synchronization

public final class PostgresLedgerStore: LedgerStore, Sendable {
    public let location: PostgresLocation
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger = Logger(label: "keyhost.ledger.postgres")

    public var displayName: String { location.display }

    /// How long opening waits for a server that does not answer (or is still starting).
    public static let defaultConnectLimit: Duration = .seconds(15)

    /// How long one call (`record`, `stats`) may take, everything included: waiting for a pooled
    /// connection, waiting on a row lock another depositor holds, the statements and the commit.
    /// Past it the call fails and its connection is closed, so PostgreSQL rolls the batch back.
    /// A call keeps the limit it started with.
    public var callLimit: Duration {
        get { currentCallLimit.withLock { $0 } }
        set { currentCallLimit.withLock { $0 = newValue } }
    }
    private let currentCallLimit: Mutex<Duration>

    /// 60 s: a 1,000-chain batch takes about a second on a local server (two round trips per
    /// chain at most), so it leaves room for a distant one (20 ms a round trip is 40 s) and for
    /// waiting on another depositor's batch of the same token, which its own limit ends.
    public static let defaultCallLimit: Duration = .seconds(60)

    /// `KEYHOST_LEDGER_TIMEOUT` (seconds, fractions allowed) when set, else `defaultCallLimit`.
    public static func callLimit(environment value: String?) throws -> Duration {
        guard let value else { return defaultCallLimit }
        guard let seconds = Double(value), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw LedgerError(kind: "location", message: "KEYHOST_LEDGER_TIMEOUT must be a number of seconds from 0.001 to 86400 (how long one ledger call may wait for PostgreSQL), got \(value.prefix(40).debugDescription)")
        }
        return .milliseconds(max(1, Int64(seconds * 1000)))
    }

    /// Connects (a pool of up to `maxConnections`) and creates the tables when missing. A server
    /// that refuses the connection (no such database, a wrong user or password) is an error at
    /// once; one that does not answer is one after `connectLimit`.
    /// `callLimit` nil: from `KEYHOST_LEDGER_TIMEOUT`, else `defaultCallLimit`.
    public init(
        location: PostgresLocation, maxConnections: Int = 8, callLimit: Duration? = nil, connectLimit: Duration = defaultConnectLimit
    ) async throws {
        self.location = location
        currentCallLimit = Mutex(try callLimit ?? Self.callLimit(environment: ProcessInfo.processInfo.environment["KEYHOST_LEDGER_TIMEOUT"]))
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
            let late = LedgerError.store("""
                \(location.display): cannot connect within \(Self.seconds(connectLimit)); \
                is the server running and reachable at \(location.host):\(location.port)?
                """)
            try await withDeadline(connectLimit, error: late) {
                let connection = try await self.firstConnection()
                do {
                    try await self.createSchema(on: connection)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            }
        } catch {
            runTask.cancel()
            throw error
        }
    }

    /// A connection of its own, outside the pool, to create the tables on. The pool keeps
    /// retrying a connection the server refused (until its circuit breaker trips after a minute),
    /// so through it a missing database or a wrong password would only ever show as the time
    /// limit; here the server's answer is the error, at once. Only what may pass (nothing
    /// listening yet, a server starting up or full) is tried again, until the caller's deadline.
    private func firstConnection() async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        var pause = Duration.milliseconds(100)
        while true {
            do {
                return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            } catch let error as PSQLError where !Self.mayPass(error) {
                throw refusal(error)
            } catch {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    /// A failure to connect that trying again may get past.
    static func mayPass(_ error: PSQLError) -> Bool {
        if let state = error.serverInfo?[.sqlState] {
            // cannot_connect_now (starting up or shutting down), too_many_connections
            return state == "57P03" || state == "53300"
        }
        return error.code == .connectionError || error.code == .serverClosedConnection || error.code == .uncleanShutdown
    }

    /// The server's refusal as a ledger error: its message and SQLSTATE, what to do, no password.
    func refusal(_ error: PSQLError) -> LedgerError {
        let prefix = "\(displayName): the server refused the connection"
        guard let message = error.serverInfo?[.message] else {
            if error.code == .authMechanismRequiresPassword {
                return .store("\(prefix): it asks user \(location.user) for a password and none was given; put it in PGPASSWORD (or in the URL, postgres://USER:PASSWORD@…)")
            }
            return .store("\(prefix): \(Self.describe(error.code))")
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        let advice: String
        switch state {
        case "3D000":
            advice = "create it (createdb -h \(location.host) -p \(location.port) -U \(location.user) \(location.database)) or name an existing database in the URL"
        case "28P01":
            advice = "check the password of user \(location.user) (PGPASSWORD, or the URL's postgres://USER:PASSWORD@…)"
        case "28000":
            advice = "check the user name \(location.user), and that the server's pg_hba.conf lets it connect to \(location.database) from this host"
        case "42501":
            advice = "grant user \(location.user) CONNECT on database \(location.database), or use a user that has it"
        default:
            advice = "check the URL's user \(location.user) and database \(location.database)"
        }
        return .store("\(prefix): \(message)\(state.isEmpty ? "" : " (SQLSTATE \(state))"); \(advice)")
    }

    private func createSchema(on connection: PostgresConnection) async throws {
        try await transaction("create the ledger's tables", on: connection) { connection in
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
        conflict: @escaping @Sendable (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> [StoreOutcome<Proof>] {
        let order = deposits.indices.sorted { a, b in
            deposits[a].tokenID.lexicographicallyPrecedes(deposits[b].tokenID) || (deposits[a].tokenID == deposits[b].tokenID && a < b)
        }
        let operation = "record the deposit"
        let call = StoreCall(), limit = callLimit
        return try await withDeadline(limit, late: { self.late(call, operation: operation, limit: limit) }) {
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try await self.transaction(operation, call: call) { connection in
                        var outcomes = [StoreOutcome<Proof>?](repeating: nil, count: deposits.count)
                        for index in order {
                            outcomes[index] = try await self.apply(deposits[index], on: connection, conflict: conflict)
                        }
                        return outcomes.map { $0! }
                    }
                } catch let error as PSQLError where Self.isRetryable(error) && attempt < 4 {
                    // A deadlock or serialization failure rolled the whole batch back, and so does
                    // a pooled connection found closed before COMMIT: nothing was recorded, so
                    // doing it again is safe.
                    continue
                } catch is StaleConnection where attempt < 4 {
                    continue
                } catch let error as PSQLError {
                    throw self.wrap(error, operation: operation)
                } catch is StaleConnection {
                    throw LedgerError.store("\(self.displayName): cannot \(operation): the connection pool keeps handing out closed connections; nothing was recorded; try again")
                }
            }
        }
    }

    /// The error of a call that reached its `limit`, whose connection is then closed.
    func late(_ call: StoreCall, operation: String, limit: Duration) -> LedgerError {
        let committing = call.expire()
        let seconds = Self.seconds(limit)
        let silent = "\(displayName): cannot \(operation): no answer from the server at \(location.host):\(location.port) within \(seconds)"
        let what = "check that the server is up and reachable (and that no session keeps a lock on these rows), then try again; KEYHOST_LEDGER_TIMEOUT sets the limit"
        if operation != "record the deposit" { return .store("\(silent); \(what)") }
        if committing {
            return .store("\(silent) of the commit, so the batch may or may not be recorded; \(what) (deposit the same chains again: a recorded one answers already_deposited)")
        }
        return .store("\(silent) (including waits for locks other sessions hold); nothing of the batch was recorded (the connection was closed, so PostgreSQL rolls it back); \(what)")
    }

    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        if fraction == 0 { return "\(whole) s" }
        return "\(Double(whole) + Double(fraction) / 1e18) s"
    }

    private func apply<Proof: Sendable>(
        _ deposit: DepositRecord, on connection: PostgresConnection,
        conflict: @Sendable (DepositRecord, [UInt8]) throws -> ConflictRecord<Proof>
    ) async throws -> StoreOutcome<Proof> {
        let id = Data(deposit.tokenID)
        let inserted = try await connection.execute(InsertDeposit(deposit: deposit), logger: logger)
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

    public func recorded(_ chains: [ChainKey]) async throws -> [RecordedChain?] {
        try await read("look up deposited chains") { connection in
            var answers: [RecordedChain?] = []
            for key in chains {
                // The deposit's chain is read only for a recorded double spend, whose proof is made from it.
                let rows = try await connection.query("""
                    SELECT d.chain_hash = \(Data(key.chainHash)), CASE WHEN s.chain_hash IS NULL THEN NULL ELSE d.chain END
                    FROM deposits d LEFT JOIN double_spends s ON s.token_id = d.token_id AND s.chain_hash = \(Data(key.chainHash))
                    WHERE d.token_id = \(Data(key.tokenID))
                    """, logger: self.logger)
                var answer: RecordedChain?
                for try await (same, deposit) in rows.decode((Bool, Data?).self) {
                    answer = same ? .deposited : deposit.map { .doubleSpend(deposit: [UInt8]($0)) }
                }
                answers.append(answer)
            }
            return answers
        }
    }

    public func stats() async throws -> LedgerStats {
        try await read("read the ledger's totals") { connection in
            var stats = LedgerStats(tokens: 0, totals: [:], tokensByUnit: [:], doubleSpends: 0)
            let rows = try await connection.query("SELECT unit, count(*), sum(value)::text FROM deposits GROUP BY unit", logger: self.logger)
            for try await (unit, count, total) in rows.decode((String, Int, String).self) {
                stats.tokens += count
                stats.tokensByUnit[unit] = count
                stats.totals[unit] = total
            }
            for try await count in try await connection.query("SELECT count(*) FROM double_spends", logger: self.logger).decode(Int.self) {
                stats.doubleSpends = count
            }
            return stats
        }
    }

    /// A call that only reads, under the store's deadline: `body` again on another connection when the pool
    /// handed out one a late call had closed, and any other error worded for `operation`.
    private func read<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let call = StoreCall(), limit = callLimit
        return try await withDeadline(limit, late: { self.late(call, operation: operation, limit: limit) }) {
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try await self.client.withConnection { connection in
                        try call.use(connection)
                        return try await body(connection)
                    }
                } catch let error as PSQLError where error.code == .clientClosedConnection && attempt < 4 {
                    continue  // the pool handed out a connection a late call had closed
                } catch {
                    throw self.wrap(error, operation: operation)
                }
            }
        }
    }

    public func close() async {
        runTask.cancel()
        _ = await runTask.value
    }

    /// `body` in one transaction on `connection` (by default one from the pool); rolled back when
    /// it throws. Under `call`'s deadline, COMMIT is sent only while the deadline has not passed.
    private func transaction<T: Sendable>(
        _ operation: String, on connection: PostgresConnection? = nil, call: StoreCall? = nil, _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        func run(_ connection: PostgresConnection) async throws -> T {
            try call?.use(connection)
            do {
                _ = try await connection.execute(Begin(), logger: self.logger)
            } catch let error as PSQLError where error.code == .clientClosedConnection {
                throw StaleConnection()  // a pooled connection a late call had closed: nothing sent
            }
            do {
                let result = try await body(connection)
                guard call?.mayCommit() ?? true else { throw CancellationError() }
                _ = try await connection.execute(Commit(), logger: self.logger)
                return result
            } catch {
                // A session the server ended (FATAL, e.g. pg_terminate_backend) or a closed socket
                // has nothing to roll back: PostgreSQL already did. A ROLLBACK sent there can wait
                // on a connection that is shutting down, so only a live session gets one.
                if !connection.isClosed && !Self.endsSession(error) {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                }
                throw error
            }
        }
        do {
            if let connection { return try await run(connection) }
            return try await client.withConnection { try await run($0) }
        } catch let error as PSQLError where Self.isRetryable(error) {
            throw error
        } catch let error as StaleConnection {
            throw error
        } catch {
            let wrapped = wrap(error, operation: operation)
            guard call != nil, let failure = wrapped as? LedgerError, failure.kind == "store", !(error is LedgerError) else { throw wrapped }
            // The server failed the batch (it went away, or ended this session): what was sent is
            // rolled back unless the commit itself was under way.
            if call?.committing == true {
                throw LedgerError.store("\(failure.message); the commit was not confirmed, so the batch may or may not be recorded: deposit the same chains again (a recorded one answers already_deposited)")
            }
            throw LedgerError.store("\(failure.message); nothing of the batch was recorded: deposit it again once the server answers")
        }
    }

    /// Whether `error` means the session is over (the server ended it, or the connection is gone).
    static func endsSession(_ error: Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        if let severity = error.serverInfo?[.severity], severity == "FATAL" || severity == "PANIC" { return true }
        return error.code == .serverClosedConnection || error.code == .clientClosedConnection || error.code == .connectionError
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

/// One store call under its deadline: the connection it uses, and whether COMMIT was sent. When
/// the deadline passes first the connection is closed at once (its queries fail, and PostgreSQL
/// rolls back the open transaction when it sees the socket close) and COMMIT is never sent.
final class StoreCall: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var late = false
        var committed = false
    }
    private let state = Mutex(State())

    /// Whether COMMIT was sent (the outcome is then the server's, whatever we hear).
    var committing: Bool { state.withLock { $0.committed } }

    /// The connection the call now uses; closed at once when the deadline has already passed.
    func use(_ connection: PostgresConnection) throws {
        let tooLate = state.withLock { state -> Bool in
            if !state.late { state.connection = connection }
            return state.late
        }
        if tooLate {
            let _: EventLoopFuture<Void> = connection.close()
            throw CancellationError()
        }
    }

    /// True, and COMMIT may be sent, unless the deadline has passed.
    func mayCommit() -> Bool {
        state.withLock { state in
            if state.late { return false }
            state.committed = true
            return true
        }
    }

    /// The deadline passed: closes the connection; true when COMMIT had been sent.
    func expire() -> Bool {
        let (connection, committed) = state.withLock { state -> (PostgresConnection?, Bool) in
            state.late = true
            return (state.connection, state.committed)
        }
        if let connection { let _: EventLoopFuture<Void> = connection.close() }
        return committed
    }
}

/// A pooled connection found closed before the batch was sent on it: take another.
struct StaleConnection: Error {}
