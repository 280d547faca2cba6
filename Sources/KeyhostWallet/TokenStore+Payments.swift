import KeyhostCrypto
import KeyhostSQLite
import KeyhostTokens

/// The payment side of a wallet file: exchange keys handed out, requests made, tokens received
/// with their chains, and the chains this wallet handed on (docs/payments.md).
extension TokenStore {
    /// An exchange key as the wallet remembers it.
    public struct ExchangeKey: Equatable, Sendable {
        public let index: Int
        public let publicKey: PublicKey
        public let requestID: [UInt8]?
        public let usedAt: Int64?
    }

    /// The index the next exchange key gets.
    public func nextExchangeIndex() throws -> Int {
        let next = try read("count exchange keys") { db in try db.fetchValue("SELECT coalesce(max(idx) + 1, 0) FROM exchange_keys", as: Int.self) ?? 0 }
        // Indexes become hardened BIP32 children (31 bits); a batch must fit below that too.
        guard (0...(Self.maxExchangeIndex - PaymentRequest.maxKeys)).contains(next) else {
            throw WalletError.store("wallet \(path): the exchange key index \(next) is outside 0 to \(Self.maxExchangeIndex) (field exchange_keys.idx): the file is damaged")
        }
        return next
    }

    /// The largest index a hardened derivation takes.
    static let maxExchangeIndex = 0x7FFF_FFFF

    /// Records keys handed out (for a request, or for later use).
    public func addExchangeKeys(_ keys: [(index: Int, publicKey: PublicKey)], requestID: [UInt8]?, now: Int64) throws {
        try write("record \(keys.count) exchange keys") { db in
            for key in keys {
                try db.execute("INSERT INTO exchange_keys (idx, public, request_id, issued_at) VALUES (?, ?, ?, ?)",
                               [key.index, key.publicKey.compressed, requestID, now])
            }
        }
    }

    /// The exchange key with this public key, if this wallet handed it out.
    public func exchangeKey(_ publicKey: PublicKey) throws -> ExchangeKey? {
        try read("look up an exchange key") { db in
            try db.fetchOne("SELECT idx, public, request_id, used_at FROM exchange_keys WHERE public = ?", [publicKey.compressed]).map(exchangeKey)
        }
    }

    /// Unused exchange keys not promised to any request.
    public func freeExchangeKeys() throws -> [ExchangeKey] {
        try read("list exchange keys") { db in
            try db.fetchAll("SELECT idx, public, request_id, used_at FROM exchange_keys WHERE used_at IS NULL AND request_id IS NULL ORDER BY idx")
                .map(exchangeKey)
        }
    }

    /// Promises free keys to a request (so one key is never in two requests).
    public func assign(keys: [PublicKey], to requestID: [UInt8]) throws {
        try write("assign exchange keys") { db in
            for key in keys {
                try db.execute("UPDATE exchange_keys SET request_id = ? WHERE public = ? AND request_id IS NULL AND used_at IS NULL", [requestID, key.compressed])
                guard db.changes == 1 else { throw WalletError.conflict("exchange key \(key) is already promised or used") }
            }
        }
    }

    func exchangeKey(_ row: Row) throws -> ExchangeKey {
        let index: Int = try row["idx"]
        guard (0...Self.maxExchangeIndex).contains(index) else {
            throw WalletError.store("wallet \(path): the exchange key index \(index) is outside 0 to \(Self.maxExchangeIndex) (field exchange_keys.idx): the file is damaged")
        }
        let publicKey: PublicKey
        do {
            publicKey = try PublicKey(bytes: row["public"])
        } catch {
            throw WalletError.store("wallet \(path): exchange key \(index) is stored in a form this keyhost cannot read: \(error)")
        }
        return ExchangeKey(index: index, publicKey: publicKey, requestID: try row["request_id"], usedAt: try row["used_at"])
    }

    /// Keeps a request this wallet made, to check payments against it.
    public func saveRequest(_ request: PaymentRequest, now: Int64) throws {
        try write("save request") { db in
            try db.execute("INSERT INTO requests (id, encoded, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING", [request.id, request.encoded, now])
        }
    }

    /// A request this wallet made.
    public func request(id: [UInt8]) throws -> PaymentRequest? {
        try read("read request") { db in
            try db.fetchOne("SELECT encoded FROM requests WHERE id = ?", [id]).map { try PaymentRequest(encoded: $0["encoded"]) }
        }
    }

    /// When this wallet stored a request it made (its clock then), or nil for no such request.
    public func requestCreatedAt(id: [UInt8]) throws -> Int64? {
        try read("read request") { db in
            try db.fetchOne("SELECT created_at FROM requests WHERE id = ?", [id]).map { try $0["created_at"] as Int64 }
        }
    }

    /// Stores received tokens HELD with their chains and marks their exchange keys used, all in
    /// one transaction. A token already here with the same chain is reported present (receiving a
    /// payment twice changes nothing); a key used by another token is refused.
    public func receive(_ chains: [TokenChain], requestID: [UInt8], now: Int64) throws -> [ImportOutcome] {
        try write("receive \(chains.count) tokens") { db in
            try chains.map { chain in
                let id = chain.token.token.id
                let links = CBOREncoder.encode(.array(chain.transfers.map(\.envelope)))
                try db.execute(
                    "INSERT INTO tokens (id, encoded, issuer, imported_at, transfers) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    [id, chain.token.encoded, chain.token.token.issuer.bytes, now, links])
                let added = db.changes == 1
                var outcome = ImportOutcome.added
                if !added {
                    guard let row = try db.fetchOne("SELECT encoded, transfers, state FROM tokens WHERE id = ?", [id]) else {
                        throw WalletError.store("wallet \(path): token \(Self.short(id)) was neither added nor found")
                    }
                    let stored: [UInt8]? = try row["transfers"]
                    guard try row["encoded"] == chain.token.encoded, stored == links else {
                        throw WalletError.conflict(
                            "token \(Self.short(id)) is already in this wallet with another history (this wallet spent or holds it already); it was not received again")
                    }
                    outcome = .alreadyPresent(try Self.state(row))
                }
                let key = chain.currentHolder
                try db.execute(
                    "UPDATE exchange_keys SET used_at = ?, token_id = ? WHERE public = ? AND request_id = ? AND used_at IS NULL",
                    [now, id, key.compressed, requestID])
                if db.changes == 0 {
                    let row = try db.fetchOne("SELECT request_id, token_id FROM exchange_keys WHERE public = ?", [key.compressed])
                    guard let row else { throw WalletError(kind: "not_ours", message: "token \(Self.short(id)) is paid to \(key), a key this wallet never issued") }
                    let usedBy: [UInt8]? = try row["token_id"]
                    let forRequest: [UInt8]? = try row["request_id"]
                    guard forRequest == requestID else {
                        throw WalletError(kind: "wrong_request", message: "token \(Self.short(id)) is paid to exchange key \(key), which belongs to another request")
                    }
                    guard usedBy == id else {
                        throw WalletError(kind: "key_reused", message: "exchange key \(key) already received another token; a one-time key takes one token (refused)")
                    }
                }
                return outcome
            }
        }
    }

    /// The chains this wallet handed on for a request (a payment, or deposits).
    public func outgoing(requestID: [UInt8]) throws -> [TokenChain] {
        try read("read outgoing transfers") { db in
            try db.fetchAll("SELECT chain FROM outgoing WHERE request_id = ? ORDER BY rowid", [requestID]).map { try TokenChain(encoded: $0["chain"]) }
        }
    }
}
