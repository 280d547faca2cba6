import Foundation
import GRDB
import KeyhostTokens
import KeyhostCrypto

/// Running a token exactly once: claim (PENDING), then commit (SPENT) or abort (HELD).
extension TokenStore {
    /// Claims token `id` for one run by `owner`: HELD becomes PENDING. Throws `already_spent`,
    /// `running` (another live process holds it) or `not_found`.
    public func beginRun(id: [UInt8], owner: RunOwner, startedAt: Int64) throws -> PendingRun {
        var generator = SystemRandomNumberGenerator()
        let runID = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let claim: (Database) throws -> Bool = { db in
            try db.execute(
                sql: """
                    UPDATE tokens SET state = 'PENDING', run_id = ?, owner_pid = ?, owner_start = ?, owner_boot = ?, pending_since = ?
                    WHERE id = ? AND state = 'HELD'
                    """,
                arguments: [Self.blob(runID), owner.pid, Int64(bitPattern: owner.startTime), owner.bootID, startedAt, Self.blob(id)])
            return db.changesCount == 1
        }
        // The claim need not reach the disk before the run starts: in WAL mode a commit with
        // synchronous=NORMAL survives a crash of this process, and only a power cut can lose it.
        // A lost PENDING means the wallet still says HELD after the reboot, and the program's
        // effects were never committed either (commitRun is FULL), so the run simply never
        // happened. Saving the fsync makes starting a run cheap.
        try write("begin a run of token \(Self.short(id))", durability: .normal) { db in
            if try claim(db) { return }
            guard let row = try Row.fetchOne(
                db, sql: "SELECT state, run_id, owner_pid, owner_start, owner_boot, pending_since, spent_at, receipt_id FROM tokens WHERE id = ?",
                arguments: [Self.blob(id)])
            else {
                throw WalletError.notFound("token \(Self.short(id)) is not in the wallet")
            }
            switch try Self.state(row) {
            case .spent:
                throw WalletError.alreadySpent(Self.spentMessage(id, row))
            case .pending:
                let holder = Self.owner(row)
                // A dead holder can never commit: reset its claim here, in this same transaction,
                // and claim the token for this run instead.
                if !holder.isAlive {
                    try resetToHeld(db, id: id, runID: Self.bytes(row, "run_id"))
                    if try claim(db) { return }
                }
                let since: Int64 = row["pending_since"] ?? 0
                throw WalletError.running("token \(Self.short(id)) is being run by process \(holder.pid) since \(UTCTime.iso8601(since)); wait for it to finish")
            case .held:
                // The write lock has been held since the UPDATE, so nobody can have changed it.
                throw WalletError.store("wallet \(path): token \(Self.short(id)) is HELD but could not be claimed")
            }
        }
        return PendingRun(tokenID: id, runID: runID, owner: owner)
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
        guard !receiptID.isEmpty else { throw WalletError.invalid("a receipt id must not be empty: it is how the spent token's run is found") }
        try write("commit the run of token \(Self.short(run.tokenID))") { db in
            if let other = try Row.fetchOne(db, sql: "SELECT token_id FROM runs WHERE receipt_id = ?", arguments: [Self.blob(receiptID)]) {
                throw WalletError.conflict(
                    "receipt \(Hex.encode(receiptID)) already records the run of token \(Self.short(Self.bytes(other, "token_id"))); a receipt id names one run")
            }
            // The row is copied only if it is still PENDING for this very run: the same condition
            // as the UPDATE below, inside the same transaction.
            try db.execute(
                sql: """
                    INSERT INTO runs (token_id, run_id, receipt_id, receipt, effects, owner_pid, started_at, spent_at)
                    SELECT id, run_id, ?, ?, ?, owner_pid, pending_since, ? FROM tokens WHERE id = ? AND state = 'PENDING' AND run_id = ?
                    """,
                arguments: [Self.blob(receiptID), Self.blob(receipt), Self.blob(effects), spentAt, Self.blob(run.tokenID), Self.blob(run.runID)])
            guard db.changesCount == 1 else { throw try conflict(db, run) }
            try db.execute(
                sql: """
                    UPDATE tokens SET state = 'SPENT', spent_at = ?, receipt_id = ?,
                        owner_pid = NULL, owner_start = NULL, owner_boot = NULL, pending_since = NULL
                    WHERE id = ? AND state = 'PENDING' AND run_id = ?
                    """,
                arguments: [spentAt, Self.blob(receiptID), Self.blob(run.tokenID), Self.blob(run.runID)])
            guard db.changesCount == 1 else {
                throw WalletError.store("wallet \(path): token \(Self.short(run.tokenID)) changed while its run committed")
            }
            if let outgoing, let paymentAmount {
                try checkPaymentRoom(db, outgoing.requestID, outgoing.chain, amount: paymentAmount)
            }
            if let outgoing {
                try db.execute(sql: "INSERT INTO outgoing (token_id, request_id, chain) VALUES (?, ?, ?)",
                               arguments: [Self.blob(run.tokenID), Self.blob(outgoing.requestID), Self.blob(outgoing.chain.encoded)])
            }
            Failpoint.hit("in_commit")
        }
    }

    /// Refuses a transfer for a payment whose key already received a token of that payment, or that
    /// would take the payment past its amount; inside the caller's transaction.
    func checkPaymentRoom(_ db: Database, _ requestID: [UInt8], _ chain: TokenChain, amount: UInt64) throws {
        let made = try Row.fetchAll(db, sql: "SELECT chain FROM outgoing WHERE request_id = ?", arguments: [Self.blob(requestID)]).map {
            try TokenChain(encoded: Self.bytes($0, "chain"))
        }
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

    /// Puts every PENDING token whose owner process is gone back to HELD and returns those runs.
    /// Runs of live processes, in this process or another, are left alone.
    @discardableResult public func reconcile() throws -> [ReconciledRun] {
        let pendingSQL = "SELECT id, run_id, owner_pid, owner_start, owner_boot, pending_since FROM tokens WHERE state = 'PENDING' ORDER BY id"
        // A read first, so opening a wallet with no dead runs (the usual case) takes no write lock.
        let deadSeen = try read("look for interrupted runs") { db in
            try Row.fetchAll(db, sql: pendingSQL).contains { !Self.owner($0).isAlive }
        }
        guard deadSeen else { return [] }
        // Decided again under the write lock: what the read saw may have committed or aborted since.
        return try write("reset interrupted runs") { db in
            var reset: [ReconciledRun] = []
            for row in try Row.fetchAll(db, sql: pendingSQL) {
                let owner = Self.owner(row)
                guard !owner.isAlive else { continue }
                let id = Self.bytes(row, "id")
                try resetToHeld(db, id: id, runID: Self.bytes(row, "run_id"))
                reset.append(ReconciledRun(tokenID: id, owner: owner, startedAt: row["pending_since"] ?? 0))
            }
            return reset
        }
    }

    /// The receipt and effects of the run that spent token `tokenID`, or nil if it is not spent.
    public func receipt(tokenID: [UInt8]) throws -> (receipt: [UInt8], effects: [UInt8])? {
        try read("read the receipt of token \(Self.short(tokenID))") { db in
            try Row.fetchOne(db, sql: "SELECT receipt, effects FROM runs WHERE token_id = ?", arguments: [Self.blob(tokenID)])
                .map { (Self.bytes($0, "receipt"), Self.bytes($0, "effects")) }
        }
    }

    /// PENDING for `runID` → HELD, inside the caller's transaction; no change for any other run.
    func resetToHeld(_ db: Database, id: [UInt8], runID: [UInt8]) throws {
        try db.execute(
            sql: """
                UPDATE tokens SET state = 'HELD', run_id = NULL, owner_pid = NULL, owner_start = NULL, owner_boot = NULL, pending_since = NULL
                WHERE id = ? AND state = 'PENDING' AND run_id = ?
                """,
            arguments: [Self.blob(id), Self.blob(runID)])
    }

    /// Why `run` cannot commit, from the token's row as it is now.
    private func conflict(_ db: Database, _ run: PendingRun) throws -> WalletError {
        let token = Self.short(run.tokenID)
        guard let row = try Row.fetchOne(
            db, sql: "SELECT state, run_id, owner_pid, owner_start, owner_boot, spent_at, receipt_id FROM tokens WHERE id = ?",
            arguments: [Self.blob(run.tokenID)])
        else {
            return .conflict("token \(token) is not in the wallet; the run cannot commit")
        }
        switch try Self.state(row) {
        case .held:
            return .conflict("the run of token \(token) no longer holds it (it was aborted, or reset because its process was taken for dead); its effects were not committed")
        case .pending:
            return .conflict("token \(token) is claimed by another run (process \(Self.owner(row).pid)); this run's effects were not committed")
        case .spent where Self.bytes(row, "run_id") == run.runID:
            return .conflict("this run of token \(token) has already committed (receipt \(Hex.encode(Self.bytes(row, "receipt_id"))))")
        case .spent:
            return .conflict("token \(token) was spent by another run at \(UTCTime.iso8601(row["spent_at"] ?? 0)) (receipt \(Hex.encode(Self.bytes(row, "receipt_id")))); this run's effects were not committed")
        }
    }

    /// "already spent" with when and which receipt, from a SPENT row.
    static func spentMessage(_ id: [UInt8], _ row: Row) -> String {
        let spentAt: Int64 = row["spent_at"] ?? 0
        return "token \(short(id)) was already spent at \(UTCTime.iso8601(spentAt)) (receipt \(Hex.encode(bytes(row, "receipt_id")))); a token runs once"
    }
}
