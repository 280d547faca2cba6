import KeyhostCrypto
import KeyhostSQLite

/// The issuers whose tokens this wallet accepts (x-only BIP340 keys).
extension TokenStore {
    /// Trusts `issuer` (32-byte x-only key); trusting it again keeps the first date.
    public func trust(issuer: [UInt8], now: Int64) throws {
        guard issuer.count == 32, (try? XOnlyPublicKey(bytes: issuer)) != nil else {
            throw WalletError.invalid("an issuer must be a 32-byte x-only public key, got \(issuer.count) bytes that are not one")
        }
        try write("trust issuer \(Hex.encode(issuer))") { db in
            try db.execute("INSERT INTO trusted_issuers (issuer, trusted_at) VALUES (?, ?) ON CONFLICT (issuer) DO NOTHING", [issuer, now])
        }
    }

    /// Stops trusting `issuer`; no error if it was not trusted.
    public func distrust(issuer: [UInt8]) throws {
        try write("distrust issuer \(Hex.encode(issuer))") { db in
            try db.execute("DELETE FROM trusted_issuers WHERE issuer = ?", [issuer])
        }
    }

    /// Whether `issuer` is trusted.
    public func isTrusted(issuer: [UInt8]) throws -> Bool {
        try read("read the trusted issuers") { db in
            try db.fetchValue("SELECT EXISTS (SELECT 1 FROM trusted_issuers WHERE issuer = ?)", [issuer], as: Bool.self) ?? false
        }
    }

    /// Every trusted issuer, in the order they were trusted.
    public func trustedIssuers() throws -> [[UInt8]] {
        try read("read the trusted issuers") { db in
            try db.fetchAll("SELECT issuer FROM trusted_issuers ORDER BY trusted_at, issuer").map { try $0["issuer"] }
        }
    }
}
