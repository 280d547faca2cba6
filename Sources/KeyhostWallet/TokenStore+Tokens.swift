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

    /// Every readable token, oldest import first (ties by id); damaged rows are left out (`damagedTokens`).
    public func tokens() throws -> [StoredToken] { try listing().tokens }

    /// The rows that cannot be read, in the same order.
    public func damagedTokens() throws -> [DamagedToken] { try listing().damaged }

    /// Every row, readable or not: one damaged row must not hide the others.
    public func listing() throws -> (tokens: [StoredToken], damaged: [DamagedToken]) {
        try read("list tokens") { db in
            var tokens: [StoredToken] = [], damaged: [DamagedToken] = []
            for row in try db.fetchAll("SELECT \(Self.tokenColumns) FROM tokens ORDER BY imported_at, id") {
                switch decode(row) {
                case .success(let token): tokens.append(token)
                case .failure(let problem): damaged.append(problem)
                }
            }
            return (tokens, damaged)
        }
    }

    /// The one token whose id starts with `hex` (at least 4 hex digits, either case); `not_found`
    /// if none does, `ambiguous` if several do.
    public func find(idPrefix hex: String) throws -> StoredToken {
        let digits = Array(hex.utf8)
        guard digits.count >= 4, digits.count <= 64, digits.allSatisfy({ Self.isHexDigit($0) }) else {
            throw WalletError.invalid("a token id prefix must be 4 to 64 hex digits, got '\(hex.prefix(70))'")
        }
        // A range on the primary key (ids are compared as bytes), not a scan of every id's hex: a
        // batch looks up each of its ids, and a wallet may hold many thousands of tokens.
        let (low, high) = Self.idRange(hexPrefix: digits)
        let range = high == nil ? "id >= ?" : "id >= ? AND id < ?"
        let bounds: [(any SQLBindable)?] = high.map { [low, $0] } ?? [low]
        let matches = try read("find token \(hex)") { db in
            // Up to two rows answer "none, one or several"; the count is only needed for the message.
            let rows = try db.fetchAll("SELECT \(Self.tokenColumns) FROM tokens WHERE \(range) ORDER BY id LIMIT 2", bounds)
            let count = rows.count < 2
                ? rows.count
                : try db.fetchValue("SELECT count(*) FROM tokens WHERE \(range)", bounds, as: Int.self) ?? 0
            return (try rows.first.map { try storedToken($0) }, count)
        }
        switch matches {
        case (let token?, 1): return token
        case (_, 0): throw WalletError.notFound("no token in the wallet has an id starting with \(hex.lowercased())")
        case (_, let count): throw WalletError.ambiguous("\(count) tokens have an id starting with \(hex.lowercased()); give more hex digits")
        }
    }

    /// The ids that start with `digits` (hex, 1 to 64 of them) are those in `low ..< high`, compared
    /// as bytes; `high` is nil when no id is above the range (a prefix of all f's).
    static func idRange(hexPrefix digits: [UInt8]) -> (low: [UInt8], high: [UInt8]?) {
        var nibbles = digits.map { d -> UInt8 in
            switch d {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return d - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return d - UInt8(ascii: "a") + 10
            default: return d - UInt8(ascii: "A") + 10
            }
        }
        func bytes(_ n: [UInt8]) -> [UInt8] {
            let padded = n.count % 2 == 0 ? n : n + [0]
            return stride(from: 0, to: padded.count, by: 2).map { padded[$0] << 4 | padded[$0 + 1] }
        }
        let low = bytes(nibbles)
        // The next prefix of the same length: add one to the last nibble, carrying.
        var i = nibbles.count - 1
        while i >= 0 && nibbles[i] == 15 { nibbles[i] = 0; i -= 1 }
        guard i >= 0 else { return (low, nil) }
        nibbles[i] += 1
        return (low, bytes(nibbles))
    }

    /// A row of `tokenColumns` as a stored token; a damaged one is a `store` error naming the token and the reason.
    func storedToken(_ row: Row) throws -> StoredToken {
        switch decode(row) {
        case .success(let token): return token
        case .failure(let damaged):
            throw WalletError.store("wallet \(path): token \(Self.short(damaged.id)) is damaged and set aside: \(damaged.reason)")
        }
    }

    /// A row of `tokenColumns`, or what makes it unreadable. Nothing here throws past a row.
    func decode(_ row: Row) -> Result<StoredToken, DamagedToken> {
        let id: [UInt8] = (try? row["id"]) ?? []
        let stateText: String? = try? row["state"]
        func damaged(_ reason: String) -> Result<StoredToken, DamagedToken> { .failure(DamagedToken(id: id, storedState: stateText, reason: reason)) }
        guard id.count == 32 else { return damaged("its id has \(id.count) bytes, not 32") }
        let signed: SignedToken
        do { signed = try SignedToken(encoded: row["encoded"]) } catch {
            return damaged("its token bytes are not a signed token this keyhost reads (\(error))")
        }
        guard signed.token.id == id else { return damaged("its token bytes belong to another token id") }
        guard let state = stateText.flatMap(TokenState.init(rawValue:)) else {
            return damaged("its state \(String(stateText?.prefix(20) ?? "").debugDescription) is none of HELD, PENDING, SPENT")
        }
        var transfers: [Transfer] = []
        do {
            if let blob: [UInt8] = try row["transfers"] {
                guard case .array(let links) = try CBORDecoder.decode(blob, limits: .init(maxBytes: 1 << 20, maxDepth: 8)) else {
                    return damaged("its transfers are not a list")
                }
                transfers = try links.map(Transfer.init(envelope:))
            }
        } catch {
            return damaged("its transfers are not readable (\(error))")
        }
        do {
            return .success(StoredToken(
                token: signed, state: state, importedAt: try row["imported_at"], spentAt: try row["spent_at"],
                receiptID: try row["receipt_id"], pendingOwner: state == .pending ? try Self.owner(row) : nil, transfers: transfers))
        } catch {
            return damaged("its times, receipt or run owner are not readable (\(error))")
        }
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
