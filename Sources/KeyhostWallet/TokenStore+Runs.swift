import KeyhostCrypto
import KeyhostSQLite
import KeyhostTokens

/// Running a token exactly once: claim (PENDING), then commit (SPENT) or abort (HELD).
extension TokenStore {
    /// Claims token `id` for one run by `owner`: HELD becomes PENDING. Throws `already_spent`,
    /// `running` (another live process holds it) or `not_found`.
    public func beginRun(id: [UInt8], owner: RunOwner, startedAt: Int64) throws -> PendingRun {
        let runID = Self.newRunID()
        // The claim need not reach the disk before the run starts: in WAL mode a commit with
        // synchronous=NORMAL survives a crash of this process, and only a power cut can lose it.
        // A lost PENDING means the wallet still says HELD after the reboot, and the program's
        // effects were never committed either (commitRun is FULL), so the run simply never
        // happened. Saving the fsync makes starting a run cheap.
        try write("begin a run of token \(Self.short(id))", durability: .normal) { db in
            try claim(db, id: id, runID: runID, owner: owner, startedAt: startedAt)
        }
        return PendingRun(tokenID: id, runID: runID, owner: owner)
    }

    /// Claims many tokens in one transaction (not fsynced, as `beginRun`), each on its own: a token
    /// that cannot be claimed gets its error and the others are claimed all the same.
    public func beginRuns(ids: [[UInt8]], owner: RunOwner, startedAt: Int64) throws -> [Result<PendingRun, WalletError>] {
        try write("begin the runs of \(ids.count) tokens", durability: .normal) { db in
            try ids.map { id in
                let runID = Self.newRunID()
                if let error = try Self.alone(db, { try claim(db, id: id, runID: runID, owner: owner, startedAt: startedAt) }) {
                    return .failure(error)
                }
                return .success(PendingRun(tokenID: id, runID: runID, owner: owner))
            }
        }
    }

    /// 16 random bytes in one getrandom call (a generator would make one call per byte).
    private static func newRunID() -> [UInt8] {
        secureRandomBytes(16)
    }

    /// Runs `body` inside a savepoint of the caller's transaction: a WalletError it throws undoes
    /// what it wrote and is returned; any other error ends the whole transaction.
    static func alone(_ db: Connection, _ body: () throws -> Void) throws -> WalletError? {
        try db.execute("SAVEPOINT one_token")
        do {
            try body()
            try db.execute("RELEASE one_token")
            return nil
        } catch let error as WalletError {
            try db.execute("ROLLBACK TO one_token")
            try db.execute("RELEASE one_token")
            return error
        }
    }

    /// HELD → PENDING for `runID`, inside the caller's transaction, or the reason it cannot be.
    private func claim(_ db: Connection, id: [UInt8], runID: [UInt8], owner: RunOwner, startedAt: Int64) throws {
        let update: () throws -> Bool = {
            try db.execute(
                """
                UPDATE tokens SET state = 'PENDING', run_id = ?, owner_pid = ?, owner_start = ?, owner_boot = ?, pending_since = ?
                WHERE id = ? AND state = 'HELD'
                """,
                [runID, owner.pid, Int64(bitPattern: owner.startTime), owner.bootID, startedAt, id])
            return db.changes == 1
        }
        if try update() { return }
        guard let row = try db.fetchOne(
            "SELECT state, run_id, owner_pid, owner_start, owner_boot, pending_since, spent_at, receipt_id FROM tokens WHERE id = ?", [id])
        else {
            throw WalletError.notFound("token \(Self.short(id)) is not in the wallet")
        }
        switch try Self.state(row) {
        case .spent:
            throw WalletError.alreadySpent(try Self.spentMessage(id, row))
        case .pending:
            let holder = try Self.owner(row)
            // A dead holder can never commit: reset its claim here, in this same transaction,
            // and claim the token for this run instead.
            if !holder.isAlive {
                try resetToHeld(db, id: id, runID: row["run_id"])
                if try update() { return }
            }
            let since: Int64 = try row["pending_since"] ?? 0
            throw WalletError.running("token \(Self.short(id)) is being run by process \(holder.pid) since \(UTCTime.iso8601(since)); wait for it to finish")
        case .held:
            // The write lock has been held since the UPDATE, so nobody can have changed it.
            throw WalletError.store("wallet \(path): token \(Self.short(id)) is HELD but could not be claimed")
        }
    }

    /// Commits `run`: its effects and receipt are stored and the token becomes SPENT, in one fsynced
    /// transaction. Throws `conflict` (and changes nothing) unless the token is PENDING for this run.
    /// `outgoing`: for a run that handed the token on, the request it paid and the chain it made,
    /// recorded in the same transaction so the payment can always be printed again.
    /// `paymentAmount`: for a payment (not a deposit), the amount its request asks. Checked here, under
    /// the write lock, against what is already recorded for the request: two processes paying one
    /// request at once each plan from what they saw, so only the commit can stop them paying one key
    /// twice or more than the amount. A refused commit changes nothing and the token stays HELD.
    public func commitRun(_ run: PendingRun, effects: [UInt8], receipt: [UInt8], receiptID: [UInt8], spentAt: Int64,
                          outgoing: (requestID: [UInt8], chain: TokenChain)? = nil, paymentAmount: UInt64? = nil) throws {
        try commitRun(SpentRun(run: run, effects: effects, receipt: receipt, receiptID: receiptID, spentAt: spentAt,
                               outgoing: outgoing, paymentAmount: paymentAmount))
    }

    /// `commitRun` for a run already gathered into a `SpentRun`.
    public func commitRun(_ spent: SpentRun) throws {
        try write("commit the run of token \(Self.short(spent.run.tokenID))") { db in try record(db, spent) }
    }

    /// Commits many runs in one fsynced transaction, each on its own: a run that cannot commit
    /// (the `commitRun` conflicts) gets its error, changes nothing, and the others commit.
    public func commitRuns(_ runs: [SpentRun]) throws -> [WalletError?] {
        try write("commit the runs of \(runs.count) tokens") { db in
            try runs.map { spent in try Self.alone(db) { try record(db, spent) } }
        }
    }

    /// Effects, receipt and SPENT for one run, inside the caller's transaction.
    private func record(_ db: Connection, _ spent: SpentRun) throws {
        let run = spent.run, receiptID = spent.receiptID
        guard !receiptID.isEmpty else { throw WalletError.invalid("a receipt id must not be empty: it is how the spent token's run is found") }
        if let other = try db.fetchValue("SELECT token_id FROM runs WHERE receipt_id = ?", [receiptID], as: [UInt8].self) {
            throw WalletError.conflict("receipt \(Hex.encode(receiptID)) already records the run of token \(Self.short(other)); a receipt id names one run")
        }
        // The row is copied only if it is still PENDING for this very run: the same condition
        // as the UPDATE below, inside the same transaction.
        try db.execute(
            """
            INSERT INTO runs (token_id, run_id, receipt_id, receipt, effects, owner_pid, started_at, spent_at)
            SELECT id, run_id, ?, ?, ?, owner_pid, pending_since, ? FROM tokens WHERE id = ? AND state = 'PENDING' AND run_id = ?
            """,
            [receiptID, spent.receipt, spent.effects, spent.spentAt, run.tokenID, run.runID])
        guard db.changes == 1 else { throw try conflict(db, run) }
        try db.execute(
            """
            UPDATE tokens SET state = 'SPENT', spent_at = ?, receipt_id = ?,
                owner_pid = NULL, owner_start = NULL, owner_boot = NULL, pending_since = NULL
            WHERE id = ? AND state = 'PENDING' AND run_id = ?
            """,
            [spent.spentAt, receiptID, run.tokenID, run.runID])
        guard db.changes == 1 else {
            throw WalletError.store("wallet \(path): token \(Self.short(run.tokenID)) changed while its run committed")
        }
        if let outgoing = spent.outgoing, let paymentAmount = spent.paymentAmount {
            try checkPaymentRoom(db, outgoing.requestID, outgoing.chain, amount: paymentAmount)
        }
        if let outgoing = spent.outgoing {
            try db.execute("INSERT INTO outgoing (token_id, request_id, chain) VALUES (?, ?, ?)", [run.tokenID, outgoing.requestID, outgoing.chain.encoded])
        }
        Failpoint.hit("in_commit")
    }

    /// Refuses a transfer for a payment whose key already received a token of that payment, or that
    /// would take the payment past its amount; inside the caller's transaction.
    func checkPaymentRoom(_ db: Connection, _ requestID: [UInt8], _ chain: TokenChain, amount: UInt64) throws {
        let made = try db.fetchAll("SELECT chain FROM outgoing WHERE request_id = ?", [requestID]).map { try TokenChain(encoded: $0["chain"]) }
        let token = Self.short(chain.token.token.id)
        if made.contains(where: { $0.currentHolder == chain.currentHolder }) {
            throw WalletError(kind: "payment_race",
                message: "token \(token) was not paid: exchange key \(chain.currentHolder) already received a token of this payment (another 'pay' of the same request ran at the same time); it stays HELD: pay the request again to finish the payment")
        }
        let paid = made.reduce(UInt64(0)) { $0 + $1.token.token.value }
        let (total, overflow) = paid.addingReportingOverflow(chain.token.token.value)
        if overflow || total > amount {
            throw WalletError(kind: "payment_race",
                message: "token \(token) was not paid: \(paid) of \(amount) \(chain.token.token.unit) is paid already, and it would take the payment past the amount (another 'pay' of the same request ran at the same time); it stays HELD: pay the request again to finish the payment")
        }
    }

    /// Gives the token of `run` back (PENDING → HELD) if it is still claimed by that run; otherwise does nothing.
    public func abortRun(_ run: PendingRun) throws {
        // Like beginRun, an abort need not be fsynced: if a power cut loses it, the token is PENDING
        // for a process that no longer exists, and reconcile() gives it back.
        try write("abort the run of token \(Self.short(run.tokenID))", durability: .normal) { db in
            try resetToHeld(db, id: run.tokenID, runID: run.runID)
        }
    }

    /// Gives back many claimed tokens in one transaction (not fsynced, as `abortRun`).
    public func abortRuns(_ runs: [PendingRun]) throws {
        guard !runs.isEmpty else { return }
        try write("abort the runs of \(runs.count) tokens", durability: .normal) { db in
            for run in runs { try resetToHeld(db, id: run.tokenID, runID: run.runID) }
        }
    }

    /// Puts every PENDING token whose owner process is gone back to HELD and returns those runs.
    /// Runs of live processes, in this process or another, are left alone.
    @discardableResult public func reconcile() throws -> [ReconciledRun] {
        let pendingSQL = "SELECT id, run_id, owner_pid, owner_start, owner_boot, pending_since FROM tokens WHERE state = 'PENDING' ORDER BY id"
        // A read first, so opening a wallet with no dead runs (the usual case) takes no write lock.
        let deadSeen = try read("look for interrupted runs") { db in
            try db.fetchAll(pendingSQL).contains { !(try Self.owner($0).isAlive) }
        }
        guard deadSeen else { return [] }
        // Decided again under the write lock: what the read saw may have committed or aborted since.
        return try write("reset interrupted runs") { db in
            var reset: [ReconciledRun] = []
            for row in try db.fetchAll(pendingSQL) {
                let owner = try Self.owner(row)
                guard !owner.isAlive else { continue }
                let id: [UInt8] = try row["id"]
                try resetToHeld(db, id: id, runID: row["run_id"])
                reset.append(ReconciledRun(tokenID: id, owner: owner, startedAt: try row["pending_since"] ?? 0))
            }
            return reset
        }
    }

    /// The receipt and effects of the run that spent token `tokenID`, or nil if it is not spent.
    public func receipt(tokenID: [UInt8]) throws -> (receipt: [UInt8], effects: [UInt8])? {
        try read("read the receipt of token \(Self.short(tokenID))") { db in
            try db.fetchOne("SELECT receipt, effects FROM runs WHERE token_id = ?", [tokenID]).map { (try $0["receipt"], try $0["effects"]) }
        }
    }

    /// PENDING for `runID` → HELD, inside the caller's transaction; no change for any other run.
    func resetToHeld(_ db: Connection, id: [UInt8], runID: [UInt8]) throws {
        try db.execute(
            """
            UPDATE tokens SET state = 'HELD', run_id = NULL, owner_pid = NULL, owner_start = NULL, owner_boot = NULL, pending_since = NULL
            WHERE id = ? AND state = 'PENDING' AND run_id = ?
            """,
            [id, runID])
    }

    /// Why `run` cannot commit, from the token's row as it is now.
    private func conflict(_ db: Connection, _ run: PendingRun) throws -> WalletError {
        let token = Self.short(run.tokenID)
        guard let row = try db.fetchOne("SELECT state, run_id, owner_pid, owner_start, owner_boot, spent_at, receipt_id FROM tokens WHERE id = ?", [run.tokenID])
        else {
            return .conflict("token \(token) is not in the wallet; the run cannot commit")
        }
        switch try Self.state(row) {
        case .held:
            return .conflict("the run of token \(token) no longer holds it (it was aborted, or reset because its process was taken for dead); its effects were not committed")
        case .pending:
            return .conflict("token \(token) is claimed by another run (process \(try Self.owner(row).pid)); this run's effects were not committed")
        case .spent:
            let receiptID: [UInt8] = try row["receipt_id"]
            if try row["run_id"] == run.runID {
                return .conflict("this run of token \(token) has already committed (receipt \(Hex.encode(receiptID)))")
            }
            let spentAt: Int64 = try row["spent_at"]
            return .conflict("token \(token) was spent by another run at \(UTCTime.iso8601(spentAt)) (receipt \(Hex.encode(receiptID))); this run's effects were not committed")
        }
    }

    /// "already spent" with when and which receipt, from a SPENT row.
    static func spentMessage(_ id: [UInt8], _ row: Row) throws -> String {
        let spentAt: Int64 = try row["spent_at"]
        let receiptID: [UInt8] = try row["receipt_id"]
        return "token \(short(id)) was already spent at \(UTCTime.iso8601(spentAt)) (receipt \(Hex.encode(receiptID))); a token runs once"
    }
}
