import KeyhostCrypto
import KeyhostTokens

/// Payments (docs/payments.md): exchange keys, requests, paying, receiving, and handing tokens to
/// their issuer for deposit.
extension TokenWallet {
    /// Where exchange keys come from: `m/7419'/1'/i'` of the wallet's exchange seed.
    public static let exchangePath = "m/7419'/1'"
    static let seedSetting = "exchange.seed"
    /// The request id deposits to `issuer` are recorded under.
    public static func depositRequestID(issuer: XOnlyPublicKey) -> [UInt8] { Hash.tagged("keyhost/deposit/v1", issuer.bytes) }

    /// The exchange seed: 32 random bytes kept in the 0600 wallet file, made on first use.
    private func exchangeRoot() throws -> HDNode {
        var seed = try store.setting(Self.seedSetting) ?? []
        if seed.isEmpty {
            seed = secureRandomBytes(32)
            try store.setSetting(Self.seedSetting, seed)
            guard let stored = try store.setting(Self.seedSetting), stored == seed else {
                throw WalletError(kind: "store", message: "wallet \(store.path): the exchange seed could not be kept")
            }
        }
        defer { for i in seed.indices { seed[i] = 0 } }
        return try HDNode(seed: seed).derive(Self.exchangePath)
    }

    func exchangeKey(index: Int) throws -> PrivateKey {
        guard let key = try exchangeRoot().derive(child: UInt32(index) | 0x8000_0000).privateKey else {
            throw WalletError(kind: "store", message: "exchange key \(index) has no private key")
        }
        return key
    }

    /// Whether `key` is this wallet's holder key or one of its exchange keys.
    func isOurs(_ key: PublicKey) throws -> Bool {
        try key == holder().publicKey || store.exchangeKey(key) != nil
    }

    /// The key that signs for a token held by `key`.
    func signer(for key: PublicKey, holderSigner: ReceiptSigner) throws -> ReceiptSigner {
        if key == (try holder().publicKey) {
            guard holderSigner.publicKey == key else {
                throw WalletError(kind: "not_ours", message: "the signing key \(holderSigner.publicKey) is not this wallet's holder key \(key)")
            }
            return holderSigner
        }
        guard let exchange = try store.exchangeKey(key) else {
            throw WalletError(kind: "not_ours", message: "\(key) is neither this wallet's holder key nor one of its exchange keys")
        }
        let derived = try exchangeKey(index: exchange.index)
        guard derived.publicKey == key else { throw WalletError(kind: "store", message: "exchange key \(exchange.index) does not derive to \(key)") }
        return SoftwareReceiptSigner(key: derived)
    }

    /// New one-time exchange keys, recorded as handed out.
    public func newExchangeKeys(count: Int, now: Int64, requestID: [UInt8]? = nil) throws -> [PublicKey] {
        guard (1...PaymentRequest.maxKeys).contains(count) else {
            throw WalletError(kind: "invalid", message: "ask for 1 to \(PaymentRequest.maxKeys) exchange keys, not \(count)")
        }
        let first = try store.nextExchangeIndex()
        let root = try exchangeRoot()
        let keys = try (first..<(first + count)).map { i -> (index: Int, publicKey: PublicKey) in
            (i, try root.derive(child: UInt32(i) | 0x8000_0000).publicKey)
        }
        try store.addExchangeKeys(keys, requestID: requestID, now: now)
        return keys.map(\.publicKey)
    }

    /// A signed request for `amount` `unit` from `issuers`, with `keys` new exchange keys.
    public func makeRequest(amount: UInt64, unit: String, issuers: [XOnlyPublicKey], keys: Int, expires: Int64, memo: String? = nil,
                            now: Int64, signer: ReceiptSigner) throws -> PaymentRequest {
        let payee = try holder().publicKey
        guard signer.publicKey == payee else { throw WalletError(kind: "not_ours", message: "the signing key is not this wallet's holder key") }
        guard expires > now else { throw WalletError(kind: "invalid", message: "the request would expire before it is made (expires \(UTCTime.iso8601(expires)))") }
        let exchange = try newExchangeKeys(count: keys, now: now)
        let request = try PaymentRequest(amount: amount, unit: unit, issuers: issuers, keys: exchange, expires: expires, created: now, payee: payee,
                                         memo: memo)
            .signed(signer.sign)
        do { try request.validate() } catch { throw WalletError(kind: "invalid", message: "the request is not valid: \(error)") }
        try store.saveRequest(request, now: now)
        try store.assign(keys: exchange, to: request.id)
        return request
    }

    // MARK: paying

    /// Pays `request`: picks HELD tokens whose values make the amount exactly and hands each to one
    /// of the request's keys by running it (one commit per token: SPENT, effects, receipt and the
    /// link). Paying a request again picks up where an interrupted payment stopped.
    public func pay(_ request: PaymentRequest, now clock: Int64, signer: ReceiptSigner, runner: (RunRequest) -> RunOutcome) throws -> Payment {
        do { try request.validate() } catch { throw WalletError(kind: "invalid_request", message: "the request is not valid: \(error); nothing was spent") }
        let now = try Self.paymentTime(clock: clock, request: request)
        guard now < request.expires else {
            throw WalletError(kind: "expired_request", message: "the request expired at \(UTCTime.iso8601(request.expires)); ask the payee for a new one; nothing was spent")
        }
        let already = try store.outgoing(requestID: request.id)
        let paid = already.reduce(UInt64(0)) { $0 + $1.token.token.value }
        guard paid < request.amount else { return Payment(requestID: request.id, chains: already) }
        let usedKeys = Set(already.compactMap { $0.transfers.last?.to.compressed })
        let freeKeys = request.keys.filter { !usedKeys.contains($0.compressed) }
        let remaining = request.amount - paid
        let accepted = Set(request.issuers.map(\.bytes))
        let candidates = try store.tokens().filter { stored in
            let t = stored.token.token
            return stored.state == .held && t.unit == request.unit && accepted.contains(t.issuer.bytes)
                && (t.expires.map { now < $0 } ?? true) && (t.notBefore.map { now >= $0 } ?? true)
        }
        let total = candidates.reduce(UInt64(0)) { $0 + $1.token.token.value }
        guard total >= remaining else {
            // Tokens another run holds PENDING (a second 'pay' of this request, say) may come back.
            let pending = try store.tokens().filter { stored in
                let t = stored.token.token
                return stored.state == .pending && t.unit == request.unit && accepted.contains(t.issuer.bytes)
            }.reduce(UInt64(0)) { $0 &+ $1.token.token.value }
            if pending > 0 && total &+ pending >= remaining {
                throw WalletError(kind: "payment_race", message: "paying \(remaining) \(request.unit) needs tokens another run of this wallet holds PENDING now (\(pending) \(request.unit); another 'pay' at the same time, say); nothing was spent: pay the request again when it has ended")
            }
            throw WalletError(kind: "insufficient", message: "paying \(remaining) \(request.unit) takes more than the \(total) \(request.unit) this wallet holds from the issuers the request accepts; nothing was spent")
        }
        guard let picked = CoinSelection.exact(remaining, from: candidates.map { $0.token.token.value }, maxCount: freeKeys.count) else {
            let reason = CoinSelection.exact(remaining, from: candidates.map { $0.token.token.value }, maxCount: candidates.count) != nil
                ? "the request offers \(freeKeys.count) exchange keys, too few for the tokens it takes; ask the payee for a request with more keys"
                : "no set of the tokens held (\(CoinSelection.describe(candidates.map { $0.token.token.value }))) makes exactly \(remaining); keyhost makes no change, so ask for an amount they make"
            throw WalletError(kind: "no_exact_cover", message: "cannot pay \(remaining) \(request.unit): \(reason); nothing was spent")
        }
        for (slot, index) in picked.enumerated() {
            let stored = candidates[index]
            do {
                _ = try run(stored, arguments: .map([]), now: now, signer: signer, runner: runner,
                            transfer: (to: freeKeys[slot], requestID: request.id, amount: request.amount))
            } catch let error as WalletError where error.kind == "running" || error.kind == "already_spent" {
                // The token was HELD when this payment picked it: a concurrent run took it since.
                throw try lostRace(stored, spent: error.kind == "already_spent", request: request)
            }
        }
        return Payment(requestID: request.id, chains: try store.outgoing(requestID: request.id))
    }

    /// The `now` of a payment's runs: this wallet's clock, but never before the request was made,
    /// which its payee refuses as backdated; a payer's clock a little behind the payee's must not
    /// make an honest payment look so. A request made further ahead than the clocks may differ is refused.
    static func paymentTime(clock: Int64, request: PaymentRequest) throws -> Int64 {
        guard let created = request.created, created > clock else { return clock }
        guard created <= clock + LinkTime.maxClockSkew else {
            throw WalletError(kind: "clock_skew", message: "the request was made at \(UTCTime.iso8601(created)), more than \(LinkTime.maxClockSkew) s after this wallet's clock (\(UTCTime.iso8601(clock))): this wallet's clock or the payee's is wrong; set it right and pay again; nothing was spent")
        }
        return created
    }

    /// `payment_race` for a token this payment picked while HELD and another run of this wallet (another
    /// `pay` at the same time, say) claimed or spent before this one could: the one kind the loser of two
    /// concurrent payments gets, whichever step it lost at.
    private func lostRace(_ stored: StoredToken, spent: Bool, request: PaymentRequest) throws -> WalletError {
        let token = "token \(Hex.encode(Array(stored.id.prefix(6))))…"
        let paid = try store.outgoing(requestID: request.id).reduce(UInt64(0)) { $0 &+ $1.token.token.value }
        let taken = spent ? "spent it meanwhile" : "holds it PENDING now"
        return WalletError(kind: "payment_race", message: "\(token) was not paid: another run of this wallet (another 'pay' at the same "
            + "time, say) \(taken); \(paid) of \(request.amount) \(request.unit) of this request is paid: pay the request again"
            + (spent ? " to finish" : " when that run has ended"))
    }

    /// The payment made for a request, as far as it got (to print it again).
    public func payment(for requestID: [UInt8]) throws -> Payment? {
        let chains = try store.outgoing(requestID: requestID)
        return chains.isEmpty ? nil : Payment(requestID: requestID, chains: chains)
    }

    // MARK: receiving

    /// What receiving a payment did.
    public struct Received {
        public let request: PaymentRequest
        public let results: [(tokenID: [UInt8], outcome: Imported)]
        public let amount: UInt64
        public var complete: Bool { amount >= request.amount }
    }

    /// Checks every chain against the request this wallet made and stores the tokens HELD; a
    /// payment received twice changes nothing. `runner` re-runs each token's program for every
    /// link of its chain: a link no run of the program made is refused (`TransferRuns`).
    public func receive(_ payment: Payment, now: Int64, runner: (RunRequest) -> RunOutcome) throws -> Received {
        guard let request = try store.request(id: payment.requestID) else {
            throw WalletError(kind: "unknown_request", message: "this payment answers a request this wallet did not make (request \(Hex.encode(payment.requestID.prefix(6)))…); nothing was received")
        }
        let accepted = Set(request.issuers.map(\.bytes))
        let keys = Set(request.keys.map(\.compressed))
        for (i, chain) in payment.chains.enumerated() {
            let name = "token \(i + 1) of \(payment.chains.count)"
            do { try chain.verify() } catch { throw WalletError(kind: "chain", message: "\(name): \(error); nothing was received") }
            let t = chain.token.token
            guard accepted.contains(t.issuer.bytes) else {
                throw WalletError(kind: "wrong_issuer", message: "\(name) comes from issuer \(t.issuer), which the request does not accept; nothing was received")
            }
            guard t.unit == request.unit else { throw WalletError(kind: "wrong_unit", message: "\(name) is in \(t.unit), not \(request.unit); nothing was received") }
            guard keys.contains(chain.currentHolder.compressed) else {
                throw WalletError(kind: "not_ours", message: "\(name) is paid to \(chain.currentHolder), not to a key of this request; nothing was received")
            }
            if let expires = t.expires, now >= expires {
                throw WalletError(kind: "expired", message: "\(name) expired at \(UTCTime.iso8601(expires)); nothing was received")
            }
            try check(chain)
            if let link = chain.transfers.last {
                try Self.checkTime(of: link, name: name, now: now, asked: try request.created ?? store.requestCreatedAt(id: request.id) ?? now)
            }
            do {
                // check() refused bytecode from an issuer this wallet does not trust.
                try TransferRuns.verify(chain, limits: maxLimits, bytecodeAllowed: true, runner: runner)
            } catch let error as TokenError {
                throw WalletError(kind: error.kind, message: "\(name): \(error.message); nothing was received")
            }
        }
        guard Set(payment.chains.map(\.token.token.id)).count == payment.chains.count else {
            throw WalletError(kind: "invalid", message: "the payment holds the same token twice; nothing was received")
        }
        let outcomes = try store.receive(payment.chains, requestID: request.id, now: now)
        let amount = payment.chains.reduce(UInt64(0)) { $0 + $1.token.token.value }
        return Received(request: request, results: zip(payment.chains, outcomes).map { chain, outcome in
            switch outcome {
            case .added: return (chain.token.token.id, .added)
            case .alreadyPresent(let state): return (chain.token.token.id, .alreadyPresent(state))
            }
        }, amount: amount)
    }

    /// The payee's bounds on the time of the link that paid it (`LinkTime`): not after its own clock
    /// by more than clocks differ, and not before it asked. Earlier links are not after this one
    /// (`TokenChain.verify`).
    static func checkTime(of link: KeyhostTokens.Transfer, name: String, now: Int64, asked: Int64) throws {
        guard link.time <= now + LinkTime.maxClockSkew else {
            throw WalletError(kind: "future_time", message: "\(name) was handed on at \(UTCTime.iso8601(link.time)) (its last transfer's time), more than \(LinkTime.maxClockSkew) s after this wallet's clock (\(UTCTime.iso8601(now))): no payment is made in the future; the payer's clock (or this wallet's) is wrong: ask the payer to set it right and pay again; nothing was received")
        }
        guard link.time >= asked else {
            throw WalletError(kind: "before_request", message: "\(name) was handed on at \(UTCTime.iso8601(link.time)) (its last transfer's time), before this wallet made the request it answers (\(UTCTime.iso8601(asked))): no payment is made before it is asked for, so the transfer was backdated: ask the payer for a payment its wallet made with its clock set right; nothing was received")
        }
    }

    // MARK: depositing

    /// Hands HELD tokens to their issuer (a transfer to its deposit key, one run each) and returns
    /// every deposit chain made so far for those issuers, to send to the ledger (again, if an
    /// earlier send failed).
    public func depositChains(ids: [[UInt8]], now: Int64, signer: ReceiptSigner, runner: (RunRequest) -> RunOutcome) throws -> [TokenChain] {
        var issuers: [XOnlyPublicKey] = []
        for id in ids {
            guard let stored = try store.token(id: id) else { throw WalletError(kind: "not_found", message: "no token \(Hex.encode(id)) in this wallet") }
            let issuer = stored.token.token.issuer
            if stored.state == .held {
                _ = try run(stored, arguments: .map([]), now: now, signer: signer, runner: runner,
                            transfer: (to: TokenChain.depositKey(issuer: issuer), requestID: Self.depositRequestID(issuer: issuer), amount: nil))
            }
            if !issuers.contains(issuer) { issuers.append(issuer) }
        }
        let chains = try issuers.flatMap { try store.outgoing(requestID: Self.depositRequestID(issuer: $0)) }
            .filter { chain in ids.contains(chain.token.token.id) }
        // A token named here that has no deposit chain went another way: say so, never an empty answer.
        for id in ids where !chains.contains(where: { $0.token.token.id == id }) {
            let state = try store.token(id: id)?.state
            let name = "token \(Hex.encode(Array(id.prefix(6))))…"
            throw WalletError(kind: "not_held", message: state == .pending
                ? "\(name) is PENDING in another run of this wallet; nothing was written: try again when that run has ended"
                : "\(name) was already spent another way (paid away or run), so this wallet has no deposit chain for it; nothing was written: its chain is with whoever it was paid to")
        }
        return chains
    }
}

/// Which tokens make an amount exactly: no change is made, so the sum must be exact.
enum CoinSelection {
    /// Indexes of at most `maxCount` values summing to `target`, fewest tokens first, or nil.
    static func exact(_ target: UInt64, from values: [UInt64], maxCount: Int) -> [Int]? {
        let order = values.indices.sorted { values[$0] > values[$1] }
        var best: [Int]?
        var chosen: [Int] = []
        var budget = 200_000 // search steps: a wallet of thousands of tokens still answers at once
        func search(_ start: Int, _ left: UInt64) {
            if left == 0 { if best == nil || chosen.count < best!.count { best = chosen }; return }
            guard budget > 0, chosen.count < min(maxCount, (best?.count ?? Int.max) - 1) else { return }
            var i = start
            while i < order.count {
                budget -= 1
                let v = values[order[i]]
                if v <= left && v > 0 {
                    chosen.append(order[i])
                    search(i + 1, left - v)
                    chosen.removeLast()
                    // Equal values lead to the same sums: try one of each.
                    while i + 1 < order.count && values[order[i + 1]] == v { i += 1 }
                }
                i += 1
            }
        }
        search(0, target)
        return best
    }

    /// "3 × 100, 1 × 50" for messages.
    static func describe(_ values: [UInt64]) -> String {
        var counts: [UInt64: Int] = [:]
        for v in values { counts[v, default: 0] += 1 }
        return counts.keys.sorted(by: >).map { "\(counts[$0]!) × \($0)" }.joined(separator: ", ")
    }
}
