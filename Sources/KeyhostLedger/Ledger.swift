#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto
import KeyhostTokens

/// An issuer's ledger: verifies deposited chains and records each token once.
///
/// Rules for a chain to be recorded, all checked before anything is written:
/// - the chain verifies (issuer signature, every link's index, predecessor and signer);
/// - a run of the token's program made every link: the ledger re-runs it for each one
///   (`TransferRuns`), so a link its holder signed by hand is refused;
/// - the token's issuer is one this ledger serves;
/// - it is a deposit: the last link, and only the last, goes to the issuer's deposit key;
/// - the token was valid at the deposit link's time: `not_before <= time < expires`. The link's
///   time is the depositor's own (deposits arrive late, offline), so the ledger also refuses a
///   link timed more than `maxClockSkew` seconds after its own clock and, when the issuer set
///   `max_deposit_age` in the token's limits, one older than that (`LinkTime`).
/// One bad chain refuses the whole batch, naming its position; nothing of the batch is recorded.
/// A chain recorded before (the same chain hash) is answered from its record, not verified again.
public final class Ledger<Chain: LedgerChain>: Sendable {
    public let issuers: [XOnlyPublicKey]
    public let store: any LedgerStore
    /// How far in the ledger's future a deposit link's time may be (`LinkTime.maxClockSkew`, as the payee's).
    public let maxClockSkew: Int64
    /// The most chains one deposit may carry.
    public static var maxBatch: Int { 1000 }
    private let clock: @Sendable () -> Int64
    /// Re-runs a token's program for a chain's links (worker processes); called from several threads at once.
    private let programs: @Sendable (LinkRunsRequest) -> [RunOutcome]

    /// `programs` runs token programs to check that each link was made by one; the ledger is the
    /// issuer's, so bytecode programs its issuers signed are run too.
    public convenience init(store: any LedgerStore, issuers: [XOnlyPublicKey], programs: @escaping @Sendable (RunRequest) -> RunOutcome,
                            maxClockSkew: Int64 = LinkTime.maxClockSkew, clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) throws {
        try self.init(store: store, issuers: issuers, linkPrograms: { $0.runEach(programs) }, maxClockSkew: maxClockSkew, clock: clock)
    }

    /// The same with a runner that takes a chain's links at once (`WorkerPool.runLinks`: one
    /// exchange with a worker per chain).
    public init(store: any LedgerStore, issuers: [XOnlyPublicKey], linkPrograms: @escaping @Sendable (LinkRunsRequest) -> [RunOutcome],
                maxClockSkew: Int64 = LinkTime.maxClockSkew, clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) throws {
        guard !issuers.isEmpty else {
            throw LedgerError(kind: "location", message: "a ledger needs at least one issuer key to serve (--issuer HEX)")
        }
        self.issuers = issuers
        self.store = store
        self.maxClockSkew = maxClockSkew
        self.clock = clock
        self.programs = linkPrograms
    }

    /// Reads armoured chains (`khchain1:…`); a bad one is an error naming its position.
    public static func parse(armored texts: [String]) throws -> [Chain] {
        guard texts.count <= maxBatch else {
            throw LedgerError(kind: "limit", message: "\(texts.count) chains in one deposit is more than the limit of \(maxBatch); send them in smaller batches")
        }
        return try texts.enumerated().map { index, text in
            do {
                return try Chain(armored: text)
            } catch {
                throw LedgerError(kind: "invalid_chain", message: "not a valid chain: \(error)").at(index)
            }
        }
    }

    /// Verifies every chain the ledger has not recorded, then records them all in one transaction.
    ///
    /// A chain recorded before (the same hash: the same chain, byte for byte, verified when it was
    /// recorded) is answered from its record without a signature check or a re-run:
    /// `already_deposited`, or `double_spend` with its proof made again from the recorded deposit.
    /// A chain given twice in the batch is verified once. `admit` is told the work the others ask
    /// for before any of it is done, and refuses it by throwing (a server's budget and rate limits).
    public func deposit(_ chains: [Chain], admit: (DepositWork) throws -> Void = { _ in }) async throws -> [DepositResult<Chain.Proof>] {
        guard chains.count <= Self.maxBatch else {
            throw LedgerError(kind: "limit", message: "\(chains.count) chains in one deposit is more than the limit of \(Self.maxBatch); send them in smaller batches")
        }
        let known = try await recorded(chains)
        // Each distinct chain still to verify, at its first position.
        var seen = Set<[UInt8]>()
        let fresh = chains.indices.filter { known[$0] == nil && seen.insert(chains[$0].hash).inserted }
        try admit(DepositWork(chains: fresh.count, links: fresh.reduce(0) { $0 + chains[$1].linkCount }))
        let now = clock()
        // Re-running programs blocks on worker processes: off Swift's cooperative pool, so that a
        // server's other requests (health, stats) keep their threads.
        let checked = try await offPool {
            try fresh.map { index in
                do { return try self.check(chains[index], now: now) } catch let error as LedgerError { throw error.at(index) }
            }
        }
        let byHash = Dictionary(uniqueKeysWithValues: checked.map { ($0.chainHash, $0) })
        let records = chains.indices.filter { known[$0] == nil }.map { byHash[chains[$0].hash]! }
        var outcomes: [StoreOutcome<Chain.Proof>] = []
        if !records.isEmpty {
            outcomes = try await store.record(records) { record, recorded in
                try Self.conflict(record, recorded: recorded, chains: chains)
            }
        }
        var next = outcomes.makeIterator()
        return try chains.indices.map { index in
            let id = chains[index].ledgerToken.token.id
            switch known[index] {
            case .deposited?: return .alreadyDeposited(tokenID: id)
            case .doubleSpend(let deposit)?: return .doubleSpend(tokenID: id, proof: try Self.proof(chains[index], recorded: deposit).proof)
            case nil:
                switch next.next()! {
                case .accepted: return .accepted(tokenID: id)
                case .alreadyDeposited: return .alreadyDeposited(tokenID: id)
                case .doubleSpend(let proof): return .doubleSpend(tokenID: id, proof: proof)
                }
            }
        }
    }

    /// What the store has recorded of each chain (nil: not recorded). Only chains of issuers this
    /// ledger serves are looked up: the others are refused by `check`, as they always were.
    private func recorded(_ chains: [Chain]) async throws -> [RecordedChain?] {
        let served = chains.indices.filter { issuers.contains(chains[$0].ledgerToken.token.issuer) }
        guard !served.isEmpty else { return Array(repeating: nil, count: chains.count) }
        let found = try await store.recorded(served.map { ChainKey(tokenID: chains[$0].ledgerToken.token.id, chainHash: chains[$0].hash) })
        guard found.count == served.count else {
            throw LedgerError.store("\(store.displayName): asked about \(served.count) chains, answered about \(found.count)")
        }
        var answers = [RecordedChain?](repeating: nil, count: chains.count)
        for (index, answer) in zip(served, found) { answers[index] = answer }
        return answers
    }

    public func stats() async throws -> LedgerStats { try await store.stats() }

    /// The record of a chain that meets every rule, or the rule it breaks.
    func check(_ chain: Chain, now: Int64) throws -> DepositRecord {
        let token = chain.ledgerToken.token
        let id = Hex.encode(token.id)
        guard issuers.contains(token.issuer) else {
            throw LedgerError(kind: "unknown_issuer", message: "token \(id): issuer \(Hex.encode(token.issuer.bytes)) is not one this ledger serves")
        }
        do {
            try chain.verify()
        } catch {
            throw LedgerError(kind: "invalid_chain", message: "token \(id): the chain does not verify: \(error)")
        }
        guard chain.linkCount > 0, chain.isDeposit(for: token.issuer), let time = chain.lastLinkTime else {
            throw LedgerError(kind: "not_deposit", message: "token \(id): not a deposit (the last link, and only the last, must go to the issuer's deposit key 02‖issuer); pay the token to the deposit key first")
        }
        if let expires = token.expires, time >= expires {
            throw LedgerError(kind: "expired", message: "token \(id): expired at \(expires), before the deposit link's time \(time)")
        }
        if let notBefore = token.notBefore, time < notBefore {
            throw LedgerError(kind: "not_yet_valid", message: "token \(id): not valid before \(notBefore), after the deposit link's time \(time)")
        }
        guard time <= now + maxClockSkew else {
            throw LedgerError(kind: "future_time", message: "token \(id): the deposit link's time \(time) is more than \(maxClockSkew) s after the ledger's clock (\(now)); check the depositing wallet's clock")
        }
        if let maxAge = token.policy.maxDepositAge, case let oldest = now.subtractingReportingOverflow(Int64(clamping: maxAge)),
           !oldest.overflow, time < oldest.partialValue {
            let age = now.subtractingReportingOverflow(time)
            throw LedgerError(kind: "stale_deposit", message: "token \(id): the deposit link's time \(time) is \(age.overflow ? "far" : "\(age.partialValue) s") before the ledger's clock (\(now)), more than the \(maxAge) s after which the issuer takes no deposit of it (the token's max_deposit_age); a deposit chain must reach the ledger within that time of being made, ask the issuer")
        }
        do {
            try chain.verifyTransferRuns(runner: programs)
        } catch let error as TokenError {
            throw LedgerError(kind: error.kind, message: "token \(id): \(error.message)")
        } catch {
            throw LedgerError(kind: "unauthorised_transfer", message: "token \(id): \(error)")
        }
        return DepositRecord(
            tokenID: token.id, chainHash: chain.hash, chain: chain.encoded, issuer: token.issuer.bytes,
            value: token.value, unit: token.unit, depositTime: time)
    }

    /// The proof for a deposit whose token is recorded with another chain.
    static func conflict(_ record: DepositRecord, recorded: [UInt8], chains: [Chain]) throws -> ConflictRecord<Chain.Proof> {
        guard let new = chains.first(where: { $0.hash == record.chainHash }) else {
            throw LedgerError.store("token \(Hex.encode(record.tokenID)): lost track of the deposited chain")
        }
        return try proof(new, recorded: recorded)
    }

    /// The proof that `new` and the chain recorded as its token's deposit (`recorded`, its encoding) fork.
    static func proof(_ new: Chain, recorded: [UInt8]) throws -> ConflictRecord<Chain.Proof> {
        let id = Hex.encode(new.ledgerToken.token.id)
        let old: Chain
        do {
            old = try Chain(encoded: recorded)
        } catch {
            throw LedgerError.store("token \(id): the recorded chain no longer reads (\(error)); the ledger's database was altered")
        }
        guard let proof = Chain.fraudProof(old, new), let signer = try? Chain.verifyProof(proof) else {
            // Two valid deposits of one id that do not fork from one token: the issuer signed two
            // different tokens with the same id.
            throw LedgerError(kind: "issuer_conflict", message: "token \(id): deposited before with a different token of the same id; the issuer signed two tokens with one id")
        }
        return ConflictRecord(proof: proof, encodedProof: Chain.encodeProof(proof), signer: signer.compressed)
    }
}
