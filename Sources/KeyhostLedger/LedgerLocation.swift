import KeyhostCrypto

/// Where a ledger's records are: `sqlite:FILE` or `postgres://USER@HOST:PORT/DB`.
///
/// keyhost opens SQLite itself and PostgreSQL through a `keyhost-ledger` child (`TokenLedgers.open`);
/// the `keyhost-ledger` program opens both in process (`open()`, in KeyhostLedgerPostgres).
public enum LedgerLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw LedgerError(kind: "location", message: "sqlite: needs a file name (sqlite:FILE)") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(url: text))
        } else {
            throw LedgerError(kind: "location", message: "a ledger database is sqlite:FILE or postgres://USER@HOST:PORT/DB, got one starting \(String(text.prefix(while: { $0 != ":" && $0 != "@" }).prefix(20)).debugDescription)")
        }
    }
}

/// `--issuer HEX`, repeatable: the issuers a ledger serves.
public enum LedgerIssuers {
    /// The keys; with `required`, none is an error saying how to name them.
    public static func parse(_ texts: [String], required: Bool = true) throws -> [XOnlyPublicKey] {
        guard !texts.isEmpty || !required else {
            throw LedgerError(kind: "location", message: "name the issuer(s) this ledger serves with --issuer HEX (x-only public key, 64 hex digits)")
        }
        return try texts.map { text in
            guard let bytes = try? Hex.decode(text), bytes.count == 32, let key = try? XOnlyPublicKey(bytes: bytes) else {
                throw LedgerError(kind: "location", message: "--issuer must be an x-only public key, 32 bytes in hex (64 digits), got \(text.prefix(80).debugDescription)")
            }
            return key
        }
    }
}
