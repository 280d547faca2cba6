import KeyhostCrypto
import KeyhostFiles
import KeyhostTokens
#if canImport(Glibc)
import Glibc
#endif

/// A wallet of one-time tokens: the store, the holder key, and the one way to run a token.
///
/// A run goes: checks (issuer signature, holder, validity window, bytecode trust, sizes) →
/// PENDING (`TokenStore.beginRun`) → the program in a worker → the holder signs the receipt →
/// effects, receipt and SPENT in one transaction (`commitRun`). Anything that fails in between
/// puts the token back to HELD with no effects; nothing the program produced is returned before
/// the commit.
public final class TokenWallet {
    public let store: TokenStore
    /// The most a token's issuer may ask for; the wallet's own cap.
    public var maxLimits = RunLimits.walletDefault

    enum Setting {
        static let holderKind = "holder.kind"
        static let holderPublic = "holder.public"
        static let holderSecret = "holder.secret"
        static let cardKeyUID = "holder.card_key_uid"
        static let cardPath = "holder.card_path"
    }

    /// Opens an existing wallet; one that was never initialised is an error saying how to.
    public init(path: String) throws {
        // Opening must not leave a new, empty wallet file behind at a mistyped path.
        guard access(path, F_OK) == 0 else {
            throw WalletError(kind: "not_initialised", message: "there is no wallet at \(path): check the path, or create one with 'keyhost token wallet init'")
        }
        store = try TokenStore(path: path)
        guard try store.setting(Setting.holderPublic) != nil else {
            throw WalletError(kind: "not_initialised", message: "wallet \(path) has no holder key yet: run 'keyhost token wallet init' first")
        }
    }

    private init(store: TokenStore) { self.store = store }

    /// Creates a wallet with a new software holder key (kept in the 0600 wallet file), or bound to
    /// a card's key. Refuses a wallet that already has a holder.
    @discardableResult
    public static func create(path: String, card: (publicKey: PublicKey, keyUID: [UInt8], path: String)? = nil) throws -> TokenWallet {
        let store = try TokenStore(path: path)
        guard try store.setting(Setting.holderPublic) == nil else {
            throw WalletError(kind: "exists", message: "wallet \(path) is already initialised (its holder key stays; use another file for a new wallet)")
        }
        if let card {
            try store.setSetting(Setting.holderKind, Array("card".utf8))
            try store.setSetting(Setting.cardKeyUID, card.keyUID)
            try store.setSetting(Setting.cardPath, Array(card.path.utf8))
            try store.setSetting(Setting.holderPublic, card.publicKey.compressed)
        } else {
            let key = PrivateKey.generate()
            var secret = key.revealedBytes()
            defer { for i in secret.indices { secret[i] = 0 } }
            try store.setSetting(Setting.holderKind, Array("software".utf8))
            try store.setSetting(Setting.holderSecret, secret)
            try store.setSetting(Setting.holderPublic, key.publicKey.compressed)
        }
        return TokenWallet(store: store)
    }

    /// The wallet's holder (read once: a wallet's holder never changes after it is created).
    public func holder() throws -> WalletHolder {
        if let cachedHolder { return cachedHolder }
        let holder = try readHolder()
        cachedHolder = holder
        return holder
    }

    private var cachedHolder: WalletHolder?

    private func readHolder() throws -> WalletHolder {
        guard let bytes = try store.setting(Setting.holderPublic), let key = try? PublicKey(bytes: bytes) else {
            throw WalletError(kind: "store", message: "wallet \(store.path): the holder key is missing or damaged")
        }
        if try store.setting(Setting.holderKind) == Array("card".utf8) {
            let uid = try store.setting(Setting.cardKeyUID) ?? []
            let path = String(decoding: try store.setting(Setting.cardPath) ?? [], as: UTF8.self)
            return .card(publicKey: key, keyUID: uid, path: path)
        }
        return .software(key)
    }

    /// The signer for a software holder; nil for a card-bound wallet (the caller brings the card).
    public func softwareSigner() throws -> SoftwareReceiptSigner? {
        guard case .software(let pub) = try holder() else { return nil }
        guard var secret = try store.setting(Setting.holderSecret) else {
            throw WalletError(kind: "store", message: "wallet \(store.path): the holder's private key is missing")
        }
        defer { for i in secret.indices { secret[i] = 0 } }
        let key = try PrivateKey(bytes: secret)
        guard key.publicKey == pub else { throw WalletError(kind: "store", message: "wallet \(store.path): the holder key is damaged") }
        return SoftwareReceiptSigner(key: key)
    }

    // MARK: tokens

    /// What importing one token did.
    public enum Imported: Equatable {
        case added
        case alreadyPresent(TokenState)
    }

    /// Verifies and stores tokens: the issuer's signature, that this wallet holds them, and that a
    /// bytecode program comes from a trusted issuer. One bad token refuses the whole batch.
    public func importTokens(_ tokens: [SignedToken], now: Int64) throws -> [Imported] {
        for signed in tokens {
            try check(TokenChain(token: signed))
        }
        return try tokens.map { token in
            switch try store.importToken(token, now: now) {
            case .added: return .added
            case .alreadyPresent(let state): return .alreadyPresent(state)
            }
        }
    }

    /// Before a token is stored or run: the issuer's signature and the chain, that this wallet
    /// holds it now, and that bytecode comes from a trusted issuer.
    func check(_ chain: TokenChain) throws {
        let token = chain.token.token
        let name = "token \(Hex.encode(Array(token.id.prefix(6))))…"
        guard chain.token.signatureIsValid else {
            throw WalletError(kind: "signature", message: "\(name): the issuer's signature does not hold (altered, or signed by another key); nothing was imported")
        }
        do { try chain.verifyLinks() } catch {
            throw WalletError(kind: "chain", message: "\(name): its transfers do not hold: \(error)")
        }
        guard try isOurs(chain.currentHolder) else {
            throw WalletError(kind: "not_ours", message: "\(name) is held by \(chain.currentHolder), not by this wallet's key \(try holder().publicKey) or one of its exchange keys; nothing was imported")
        }
        if token.program.kind == .luaBytecode, try !store.isTrusted(issuer: token.issuer.bytes) {
            throw WalletError(kind: "untrusted_bytecode", message: "\(name) carries bytecode, and its issuer \(token.issuer) is not trusted: Lua does not verify bytecode, so only trusted issuers may ship it ('keyhost token trust ISSUER' if you trust them)")
        }
    }

    // MARK: running

    /// The result of a committed run.
    public struct Run: Sendable {
        public let receipt: SignedReceipt
        /// For a transfer: the chain with the new link, as the payee or the ledger gets it.
        public var handedOn: TokenChain? = nil
        public var effects: [CBORValue] { receipt.receipt.effects }
    }

    /// Runs a HELD token once. `runner` executes the program (a worker process in keyhost);
    /// `signer` is the wallet's holder key (software, or a card session); tokens received on an
    /// exchange key are signed with that key. Throws `WalletError` with the failure's kind, and
    /// leaves the token HELD, if anything before the commit fails.
    public func run(id: [UInt8], arguments: CBORValue, now: Int64, signer: ReceiptSigner,
                    runner: (RunRequest) -> RunOutcome) throws -> Run {
        guard let stored = try store.token(id: id) else {
            throw WalletError(kind: "not_found", message: "no token \(Hex.encode(id)) in this wallet")
        }
        return try run(stored, arguments: arguments, now: now, signer: signer, runner: runner, transfer: nil)
    }

    /// The one way a token runs: checks, PENDING, the program, the receipt (and for a transfer
    /// the new link), then effects, receipt, link and SPENT in one commit.
    func run(_ stored: StoredToken, arguments: CBORValue, now: Int64, signer: ReceiptSigner, runner: (RunRequest) -> RunOutcome,
             transfer: Transfer?) throws -> Run {
        let planned = try plan(stored, arguments: arguments, now: now, signer: signer, transfer: transfer)
        Failpoint.hit("before_pending")
        let pending = try store.beginRun(id: planned.id, owner: RunOwner.current(), startedAt: now)
        Failpoint.hit("after_pending")
        var committed = false
        defer { if !committed { try? store.abortRun(pending) } }
        let effects = try Self.execute(planned.run, runner: runner)
        Failpoint.hit("after_program")
        let sealed = try Self.seal(planned.run, key: planned.key, effects: effects, pending: pending)
        Failpoint.hit("after_sign")
        try store.commitRun(sealed.spent)
        committed = true
        Failpoint.hit("after_commit")
        return sealed.run
    }

    /// One token of a batch: which, and the arguments for its program.
    public struct RunItem {
        public let id: [UInt8]
        public let arguments: CBORValue
        /// The token as the caller already read it from this wallet (saves reading it again).
        let stored: StoredToken?

        public init(id: [UInt8], arguments: CBORValue) {
            self.id = id
            self.arguments = arguments
            stored = nil
        }

        public init(_ stored: StoredToken, arguments: CBORValue) {
            id = stored.id
            self.arguments = arguments
            self.stored = stored
        }
    }

    /// Runs many HELD tokens, each on its own (its own checks, worker run, receipt), and commits
    /// every run that completed in one fsynced transaction: one durable commit for the batch
    /// instead of one per token. A token that fails anywhere gets its `WalletError` in its place
    /// and stays HELD with no effects; the others are not held back by it. Nothing is returned
    /// before the commit. Throws (with every token left HELD) only if the batch's claim or commit
    /// cannot be written at all.
    public func runMany(_ items: [RunItem], now: Int64, signer: ReceiptSigner,
                        runner: @escaping @Sendable (RunRequest) -> RunOutcome) throws -> [Result<Run, WalletError>] {
        try runMany(items, now: now, signer: signer, runners: [runner])
    }

    /// `runMany` with one lane per runner: the programs run (and, for a software holder key, the
    /// receipts are signed) on that many threads at once, each lane with its own runner. Claims and
    /// the one commit stay on the calling thread.
    public func runMany(_ items: [RunItem], now: Int64, signer: ReceiptSigner,
                        runners: [@Sendable (RunRequest) -> RunOutcome]) throws -> [Result<Run, WalletError>] {
        precondition(!runners.isEmpty, "runMany needs at least one runner")
        var results = [Result<Run, WalletError>?](repeating: nil, count: items.count)
        var planned: [(index: Int, plan: Planned)] = []
        var seen = Set<[UInt8]>()
        for (index, item) in items.enumerated() {
            do {
                guard seen.insert(item.id).inserted else {
                    throw WalletError(kind: "duplicate", message: "token \(Hex.encode(Array(item.id.prefix(6))))… is in the batch twice; a token runs once")
                }
                guard let stored = try item.stored ?? store.token(id: item.id) else {
                    throw WalletError.notFound("no token \(Hex.encode(item.id)) in this wallet")
                }
                planned.append((index, try plan(stored, arguments: item.arguments, now: now, signer: signer, transfer: nil)))
            } catch let error as WalletError {
                results[index] = .failure(error)
            }
        }
        Failpoint.hit("before_pending")
        let claims = try store.beginRuns(ids: planned.map(\.plan.id), owner: RunOwner.current(), startedAt: now)
        Failpoint.hit("after_pending")
        var sealed: [(index: Int, sealed: Sealed)] = []
        var unfinished: [PendingRun] = []
        defer { try? store.abortRuns(unfinished) }
        var work: [(index: Int, plan: Planned, pending: PendingRun)] = []
        for ((index, plan), claim) in zip(planned, claims) {
            switch claim {
            case .failure(let error): results[index] = .failure(error)
            case .success(let pending):
                unfinished.append(pending)
                work.append((index, plan, pending))
            }
        }
        // A software key signs from any thread (libsecp256k1's context is only read); a card signs on this one,
        // so a lane gets the key only when it is a software one.
        let signInLanes = signer is SoftwareReceiptSigner
        let lanes = work.map { item in
            LaneWork(plan: item.plan.run, key: signInLanes ? item.plan.key as? SoftwareReceiptSigner : nil, pending: item.pending)
        }
        let outcomes = try parallelMap(lanes, width: runners.count) { item, lane -> LaneOutcome in
            do {
                let effects = try Self.execute(item.plan, runner: runners[lane])
                guard let key = item.key else { return .ran(effects) }
                return .sealed(try Self.seal(item.plan, key: key, effects: effects, pending: item.pending))
            } catch let error as WalletError {
                return .failed(error)
            } catch {
                return .failed(WalletError.store("\(item.plan.name): \(error)"))
            }
        }
        for ((index, plan, pending), outcome) in zip(work, outcomes) {
            do {
                switch outcome {
                case .sealed(let done): sealed.append((index, done))
                case .ran(let effects): sealed.append((index, try Self.seal(plan.run, key: plan.key, effects: effects, pending: pending)))
                case .failed(let error): throw error
                }
            } catch let error as WalletError {
                results[index] = .failure(error)
            }
        }
        Failpoint.hit("after_program")
        Failpoint.hit("after_sign")
        let refused = try store.commitRuns(sealed.map(\.sealed.spent))
        var committed = Set<[UInt8]>()
        for ((index, one), error) in zip(sealed, refused) {
            if let error {
                results[index] = .failure(error)
            } else {
                results[index] = .success(one.run)
                committed.insert(one.spent.run.tokenID)
            }
        }
        // Runs whose program failed or whose commit was refused go back to HELD (the deferred abort).
        unfinished.removeAll { committed.contains($0.tokenID) }
        Failpoint.hit("after_commit")
        return results.map { $0! }
    }

    /// What a batch's lane made of one token: its sealed run, its effects (for the calling thread to
    /// sign, with a card), or why it failed.
    enum LaneOutcome: Sendable {
        case sealed(Sealed)
        case ran([CBORValue])
        case failed(WalletError)
    }

    /// A transfer's destination: the key, the request it pays, and for a payment the amount asked.
    typealias Transfer = (to: PublicKey, requestID: [UInt8], amount: UInt64?)

    /// A run checked and ready to start: the token, the key that signs its receipt (a card session, used on the
    /// wallet's own thread only, or a software key), and the rest, which any thread may take.
    struct Planned {
        let id: [UInt8]
        let key: ReceiptSigner
        let run: RunPlan
    }

    /// What a lane needs of a planned run: the request to run and what goes into the receipt.
    struct RunPlan: Sendable {
        let name: String
        let chain: TokenChain
        let arguments: CBORValue
        let now: Int64
        let request: RunRequest
        let transfer: Transfer?
    }

    /// One run for a lane: the plan, the software key when the lane signs too, the claim.
    struct LaneWork: Sendable {
        let plan: RunPlan
        let key: SoftwareReceiptSigner?
        let pending: PendingRun
    }

    /// A completed run with its signed receipt, ready to commit.
    struct Sealed: Sendable {
        let run: Run
        let spent: SpentRun
    }

    /// Everything checked before a run may start: the token and chain, the signing key, the
    /// validity window, the arguments.
    private func plan(_ stored: StoredToken, arguments: CBORValue, now clock: Int64, signer: ReceiptSigner, transfer: Transfer?) throws -> Planned {
        let chain = stored.chain
        let token = chain.token.token
        let name = "token \(Hex.encode(Array(token.id.prefix(6))))…"
        try check(chain)
        let now = try transfer == nil ? clock : Self.transferTime(clock: clock, after: chain, name: name)
        let key = try self.signer(for: chain.currentHolder, holderSigner: signer)
        if let notBefore = token.notBefore, now < notBefore {
            throw WalletError(kind: "not_yet_valid", message: "\(name) is not valid before \(UTCTime.iso8601(notBefore)); it stays HELD")
        }
        if let expires = token.expires, now >= expires {
            throw WalletError(kind: "expired", message: "\(name) expired at \(UTCTime.iso8601(expires)); it cannot run")
        }
        guard case .map = arguments, CBOREncoder.encode(arguments).count <= TokenLimits.maxArgumentsBytes else {
            throw WalletError(kind: "invalid", message: "\(name): the arguments must be a map of at most \(TokenLimits.maxArgumentsBytes) bytes encoded")
        }
        let request = RunRequest(
            token: chain.token, arguments: arguments, now: now, limits: maxLimits.capping(token.policy),
            bytecodeAllowed: token.program.kind == .luaBytecode, transfers: chain.transfers, transferTo: transfer?.to
        )
        return Planned(id: token.id, key: key, run: RunPlan(name: name, chain: chain, arguments: arguments, now: now, request: request, transfer: transfer))
    }

    /// The `now` of a run that hands the token on: this wallet's clock, but never before the link
    /// that brought the token here, which every verifier refuses (`LinkTime`). That link may be
    /// ahead of this clock by as much as the payee allowed (the payer's clock was ahead); further
    /// ahead, this wallet's clock went back, and the run is refused with the token HELD.
    static func transferTime(clock: Int64, after chain: TokenChain, name: String) throws -> Int64 {
        guard let last = chain.transfers.last?.time, last > clock else { return clock }
        guard last <= clock + LinkTime.maxClockSkew else {
            throw WalletError(kind: "clock_skew", message: "\(name) was handed to this wallet at \(UTCTime.iso8601(last)), more than \(LinkTime.maxClockSkew) s after this wallet's clock (\(UTCTime.iso8601(clock))): a transfer made now would be dated before it and refused; set the clock right and try again; it stays HELD")
        }
        return last
    }

    /// The program, in the runner: its effects, or why it did not complete.
    private static func execute(_ planned: RunPlan, runner: (RunRequest) -> RunOutcome) throws -> [CBORValue] {
        switch runner(planned.request) {
        case .completed(let produced, let transferred):
            if let transfer = planned.transfer, !transferred {
                throw WalletError(kind: "not_transferable", message: "\(planned.name)'s program did not hand the token to \(transfer.to) (it does not move this way, e.g. a voucher); it stays HELD")
            }
            return produced
        case .failed(let kind, let message):
            throw WalletError(kind: kind, message: "\(planned.name) did not run to the end (\(kind)); it stays HELD, with no effects: \(message)")
        }
    }

    /// The holder signs the receipt (and for a transfer the new link).
    private static func seal(_ planned: RunPlan, key: ReceiptSigner, effects: [CBORValue], pending: PendingRun) throws -> Sealed {
        let name = planned.name
        let receipt = Receipt(chain: planned.chain, arguments: planned.arguments, now: planned.now, effects: effects, transferTo: planned.transfer?.to)
        let signature: [UInt8]
        do { signature = try key.sign(digest: receipt.digest) } catch {
            throw WalletError(kind: "signing", message: "\(name): the holder key could not sign the receipt; it stays HELD: \(error)")
        }
        let signedReceipt = SignedReceipt(receipt: receipt, signature: signature)
        guard signedReceipt.signatureIsValid else {
            throw WalletError(kind: "signing", message: "\(name): the receipt signature does not verify with the holder key; it stays HELD")
        }
        var outgoing: (requestID: [UInt8], chain: TokenChain)?
        if let transfer = planned.transfer {
            do {
                outgoing = (transfer.requestID, try planned.chain.appending(to: transfer.to, time: planned.now, arguments: planned.arguments,
                                                                           receipt: signedReceipt.id, sign: key.sign))
            } catch {
                throw WalletError(kind: "signing", message: "\(name): the holder key could not sign the transfer; it stays HELD: \(error)")
            }
        }
        let spent = SpentRun(run: pending, effects: receipt.encodedEffects, receipt: signedReceipt.encoded, receiptID: signedReceipt.id,
                             spentAt: planned.now, outgoing: outgoing, paymentAmount: planned.transfer?.amount)
        return Sealed(run: Run(receipt: signedReceipt, handedOn: outgoing?.chain), spent: spent)
    }

    /// The receipt of a spent token.
    public func receipt(id: [UInt8]) throws -> SignedReceipt? {
        guard let stored = try store.receipt(tokenID: id) else { return nil }
        return try SignedReceipt(encoded: stored.receipt)
    }
}
