import KeyhostCrypto

/// A 4.x card's identity certificate (98 bytes): its compressed identity key, then a CA signature r ‖ s ‖ v
/// over SHA-256(identity key). The CA key is found by public-key recovery and checked against a trust list.
public struct IdentityCertificate: Equatable, Sendable {
    public static let length = 98

    public let identityKey: PublicKey
    public let signature: RecoverableSignature
    public let bytes: [UInt8]

    /// The Keycard CA keys keycard-py ships (official, then test).
    public static let defaultCAKeys: [PublicKey] = [
        "029ab99ee1e7a71bdf45b3f9c58c99866ff1294d2c1e304e228a86e10c3343501c",
        "025877220aaae6e54a6f974602d5995c0fe24a3ea7ddabd8644bec795b9da00743",
    ].compactMap { try? PublicKey(bytes: hexBytes($0)) }

    public init(bytes: [UInt8]) throws {
        guard bytes.count == IdentityCertificate.length else {
            throw KeycardError.invalidResponse(.select, "identity certificate of \(bytes.count) bytes; expected \(IdentityCertificate.length)")
        }
        do {
            identityKey = try PublicKey(bytes: Array(bytes[0..<33]))
            let v = Int(bytes[97])
            signature = try RecoverableSignature(compact: Array(bytes[33..<97]), recoveryID: v >= 27 ? v - 27 : v)
        } catch {
            throw KeycardError.invalidResponse(.select, "identity certificate: \(error)")
        }
        self.bytes = bytes
    }

    /// Signs `identityKey` with `caKey` (what a CA does at personalisation; used by the software card).
    public static func issue(identityKey: PublicKey, caKey: PrivateKey) throws -> IdentityCertificate {
        let signature = try caKey.signRecoverable(digest: Hash.sha256(identityKey.compressed))
        return try IdentityCertificate(bytes: identityKey.compressed + signature.r + signature.s + [UInt8(signature.recoveryID)])
    }

    /// The CA key that signed this certificate.
    public func caPublicKey() throws -> PublicKey {
        do { return try signature.recoverPublicKey(digest: Hash.sha256(identityKey.compressed)) } catch {
            throw KeycardError.untrustedCard("cannot recover the CA key from the certificate: \(error)")
        }
    }

    /// Throws unless the identity key is trusted directly or the CA key is in `caKeys`.
    public func checkTrust(caKeys: [PublicKey], identityKeys: [PublicKey] = []) throws {
        if identityKeys.contains(identityKey) { return }
        let ca = try caPublicKey()
        guard caKeys.contains(ca) else { throw KeycardError.unknownCA(ca) }
    }

    /// Throws unless `der` is the identity key's signature over `digest`.
    public func verify(digest: [UInt8], der: [UInt8]) throws {
        let ok: Bool
        do { ok = try identityKey.verify(ECDSASignature(der: der).normalized(), digest: digest) } catch {
            throw KeycardError.untrustedCard("handshake signature unreadable: \(error)")
        }
        guard ok else { throw KeycardError.untrustedCard("handshake signature does not match the identity key") }
    }
}

func hexBytes(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }
