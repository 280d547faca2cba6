import KeyhostCrypto

/// A secure channel v1 pairing: the slot index on the card and the 32-byte pairing key.
/// Persist it (it is a secret) to skip PAIR next time.
public struct Pairing: Equatable, Sendable, CustomStringConvertible {
    public let index: UInt8
    public let key: SecretBytes

    public init(index: UInt8, key: SecretBytes) throws {
        guard key.count == 32 else { throw KeycardError.invalidArgument("a pairing key has 32 bytes, got \(key.count)") }
        self.index = index
        self.key = key
    }

    public init(index: UInt8, key: [UInt8]) throws { try self.init(index: index, key: SecretBytes(key)) }

    /// The index the 3.2 applet gives an ephemeral pairing.
    public static let ephemeralIndex: UInt8 = 0xFF

    public var description: String { "Pairing(index \(index), key redacted)" }
}

/// The 32-byte pairing secret shared by card and clients.
public enum PairingSecret {
    public static let salt = Array("Keycard Pairing Password Salt".utf8)
    public static let iterations = 50_000

    /// PBKDF2-HMAC-SHA256(NFKD(password), "Keycard Pairing Password Salt", 50 000, 32).
    public static func derive(password: String) throws -> SecretBytes {
        var bytes = Array(NFKD.normalize(password).utf8)
        defer { wipe(&bytes) }
        return try KDF.pbkdf2SHA256(password: bytes, salt: salt, iterations: iterations, length: 32)
    }

    /// The same from the password's UTF-8 bytes: ASCII (NFKD leaves it as it is) never becomes a String,
    /// which could not be wiped; other text goes through `derive(password: String)`.
    public static func derive(password: SecretBytes) throws -> SecretBytes {
        var bytes = password.revealedBytes()
        defer { wipe(&bytes) }
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return try derive(password: String(decoding: bytes, as: UTF8.self)) }
        return try KDF.pbkdf2SHA256(password: bytes, salt: salt, iterations: iterations, length: 32)
    }
}
