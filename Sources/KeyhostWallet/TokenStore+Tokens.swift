import KeyhostCrypto
import KeyhostSQLite
import KeyhostTokens

/// Importing and listing tokens.
extension TokenStore {
    static let tokenColumns = "id, encoded, state, imported_at, spent_at, receipt_id, owner_pid, owner_start, owner_boot, transfers"

    /// Adds `token` as HELD, or reports it already present; a different token with the same id is
    /// a `conflict`. Does not verify the signature: the caller does, before importing.
    public func importToken(_ token: SignedToken, now: Int64) throws -> ImportOutcome {
        let id = token.token.id
        guard id.count == 32 else { throw WalletError.invalid("a token id must be 32 bytes, got \(id.count)") }
        let encoded = token.encoded
        return try write("import token \(Self.short(id))") { db in
            try db.execute(
                "INSERT INTO tokens (id, encoded, issuer, imported_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                [id, encoded, token.token.issuer.bytes, now])
            if db.changes == 1 { return .added }
            guard let row = try db.fetchOne("SELECT encoded, state FROM tokens WHERE id = ?", [id]) else {
                throw WalletError.store("wallet \(path): token \(Self.short(id)) was neither added nor found")
            }
            guard try row["encoded"] == encoded else {
                throw WalletError.conflict(
                    "a different token with the same id \(Self.short(id)) is already in the wallet (its bytes or signature differ); the wallet keeps the one it has")
            }
            return .alreadyPresent(try Self.state(row))
        }
    }

    /// The token with this id, or nil.
    public func token(id: [UInt8]) throws -> StoredToken? {
        try read("read token \(Self.short(id))") { db in
            try db.fetchOne("SELECT \(Self.tokenColumns) FROM tokens WHERE id = ?", [id]).map { try storedToken($0) }
        }
    }

    /// Every token, oldest import first (ties by id).
    public func tokens() throws -> [StoredToken] {
        try read("list tokens") { db in
            try db.fetchAll("SELECT \(Self.tokenColumns) FROM tokens ORDER BY imported_at, id").map { try storedToken($0) }
        }
    }

    /// The one token whose id starts with `hex` (at least 4 hex digits, either case); `not_found`
    /// if none does, `ambiguous` if several do.
    public func find(idPrefix hex: String) throws -> StoredToken {
        let digits = Array(hex.utf8)
        guard digits.count >= 4, digits.count <= 64, digits.allSatisfy({ Self.isHexDigit($0) }) else {
            throw WalletError.invalid("a token id prefix must be 4 to 64 hex digits, got '\(hex.prefix(70))'")
        }
        let upper = hex.uppercased()
        let matches = try read("find token \(hex)") { db in
            // Up to two rows answer "none, one or several"; the count is only needed for the message.
            let rows = try db.fetchAll(
                "SELECT \(Self.tokenColumns) FROM tokens WHERE substr(hex(id), 1, ?) = ? ORDER BY imported_at, id LIMIT 2", [upper.utf8.count, upper])
            let count = rows.count < 2
                ? rows.count
                : try db.fetchValue("SELECT count(*) FROM tokens WHERE substr(hex(id), 1, ?) = ?", [upper.utf8.count, upper], as: Int.self) ?? 0
            return (try rows.first.map { try storedToken($0) }, count)
        }
        switch matches {
        case (let token?, 1): return token
        case (_, 0): throw WalletError.notFound("no token in the wallet has an id starting with \(hex.lowercased())")
        case (_, let count): throw WalletError.ambiguous("\(count) tokens have an id starting with \(hex.lowercased()); give more hex digits")
        }
    }

    /// A row of `tokenColumns` as a stored token.
    func storedToken(_ row: Row) throws -> StoredToken {
        let id: [UInt8] = try row["id"]
        let signed: SignedToken
        do {
            signed = try SignedToken(encoded: row["encoded"])
        } catch {
            throw WalletError.store("wallet \(path): token \(Self.short(id)) is stored in a form this keyhost cannot read: \(error)")
        }
        let state = try Self.state(row)
        var transfers: [Transfer] = []
        if let blob: [UInt8] = try row["transfers"] {
            do {
                guard case .array(let links) = try CBORDecoder.decode(blob, limits: .init(maxBytes: 1 << 20, maxDepth: 8)) else {
                    throw WalletError.store("not an array")
                }
                transfers = try links.map(Transfer.init(envelope:))
            } catch {
                throw WalletError.store("wallet \(path): the transfers of token \(Self.short(id)) are stored in a form this keyhost cannot read: \(error)")
            }
        }
        return StoredToken(
            token: signed, state: state, importedAt: try row["imported_at"], spentAt: try row["spent_at"],
            receiptID: try row["receipt_id"], pendingOwner: state == .pending ? try Self.owner(row) : nil, transfers: transfers)
    }

    /// The `state` column, refusing values no version of the schema allows.
    static func state(_ row: Row) throws -> TokenState {
        let text: String = try row["state"]
        guard let state = TokenState(rawValue: text) else { throw WalletError.store("a token has the unknown state '\(text)'") }
        return state
    }

    /// The owner columns of a PENDING row.
    static func owner(_ row: Row) throws -> RunOwner {
        let start: Int64? = try row["owner_start"]
        let pid: Int32? = try row["owner_pid"]
        let boot: String? = try row["owner_boot"]
        return RunOwner(pid: pid ?? 0, startTime: UInt64(bitPattern: start ?? 0), bootID: boot ?? "")
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x61...0x66).contains(c) || (0x41...0x46).contains(c)
    }
}
