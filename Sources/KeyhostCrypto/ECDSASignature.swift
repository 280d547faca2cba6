import CSecp256k1

/// An ECDSA signature (r, s) over secp256k1.
public struct ECDSASignature: Equatable, Sendable, CustomStringConvertible {
    var raw: secp256k1_ecdsa_signature

    init(raw: secp256k1_ecdsa_signature) { self.raw = raw }

    /// Parses 64 bytes r || s (big-endian each).
    public init(compact: [UInt8]) throws {
        guard compact.count == 64 else { throw SignatureError.signatureLength(compact.count, expected: 64) }
        var raw = secp256k1_ecdsa_signature()
        guard !hasZeroHalf(compact),
              secpSucceeded(secp256k1_ecdsa_signature_parse_compact(Secp256k1.shared.context, &raw, compact)) else {
            throw SignatureError.valueOutOfRange
        }
        self.raw = raw
    }

    /// Parses a DER signature (as in Bitcoin scripts, without the sighash byte).
    public init(der: [UInt8]) throws {
        guard der.count <= 72 else { throw SignatureError.derTooLong(der.count) }
        var raw = secp256k1_ecdsa_signature()
        guard !der.isEmpty,
              secpSucceeded(secp256k1_ecdsa_signature_parse_der(Secp256k1.shared.context, &raw, der, der.count)) else {
            throw SignatureError.invalidDER
        }
        self.raw = raw
        // libsecp256k1 accepts out-of-range numbers in DER (mapping them to an unverifiable signature); reject them here.
        if hasZeroHalf(compact) { throw SignatureError.valueOutOfRange }
    }

    /// 64 bytes r || s.
    public var compact: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 64) { out, count in
            var raw = self.raw
            _ = secp256k1_ecdsa_signature_serialize_compact(Secp256k1.shared.context, out.baseAddress!, &raw)
            count = 64
        }
    }

    /// The 32-byte r value.
    public var r: [UInt8] { Array(compact[0..<32]) }

    /// The 32-byte s value.
    public var s: [UInt8] { Array(compact[32..<64]) }

    /// Strict DER encoding (at most 72 bytes).
    public var der: [UInt8] {
        var out = [UInt8](repeating: 0, count: 72)
        var length = 72
        var raw = self.raw
        _ = secp256k1_ecdsa_signature_serialize_der(Secp256k1.shared.context, &out, &length, &raw)
        return Array(out[0..<length])
    }

    /// Whether s is in the lower half of the order (BIP62/BIP146, EIP-2), as required for relay and by `verify`.
    public var isLowS: Bool {
        var raw = self.raw
        return !secpSucceeded(secp256k1_ecdsa_signature_normalize(Secp256k1.shared.context, nil, &raw))
    }

    /// The same signature with s replaced by n - s when s is high.
    public func normalized() -> ECDSASignature {
        var input = raw
        var output = secp256k1_ecdsa_signature()
        _ = secp256k1_ecdsa_signature_normalize(Secp256k1.shared.context, &output, &input)
        return ECDSASignature(raw: output)
    }

    public static func == (lhs: ECDSASignature, rhs: ECDSASignature) -> Bool { lhs.compact == rhs.compact }

    /// Hex of the DER encoding.
    public var description: String { Hex.encode(der) }
}

/// An ECDSA signature with the recovery id that lets the signer's public key be recovered from it.
public struct RecoverableSignature: Equatable, Sendable, CustomStringConvertible {
    /// The 32-byte r value.
    public let r: [UInt8]
    /// The 32-byte s value (always low-S when produced by keyhost).
    public let s: [UInt8]
    /// Recovery id 0...3 (bit 0: y parity of R; bit 1: R.x overflowed n).
    public let recoveryID: Int

    /// Builds from 64 bytes r || s and a recovery id 0...3.
    public init(compact: [UInt8], recoveryID: Int) throws {
        guard compact.count == 64 else { throw SignatureError.signatureLength(compact.count, expected: 64) }
        guard (0...3).contains(recoveryID) else { throw SignatureError.recoveryID(recoveryID) }
        self.r = Array(compact[0..<32])
        self.s = Array(compact[32..<64])
        self.recoveryID = recoveryID
        _ = try recoverableRaw()  // rejects r or s out of range now rather than at recovery
    }

    /// The recoverable form of `signature` over `digest` by `key`: the recovery id that gives `key` back, nil when none
    /// does (the signature is not `key`'s over `digest`). For signers that return a plain signature (smart cards).
    public init?(_ signature: ECDSASignature, digest: [UInt8], key: PublicKey) {
        for id in 0...3 {
            if let candidate = try? RecoverableSignature(compact: signature.compact, recoveryID: id),
               (try? candidate.recoverPublicKey(digest: digest)) == key {
                self = candidate
                return
            }
        }
        return nil
    }

    /// Parses Ethereum-style 65 bytes r || s || v, with v in 0...3 or 27...30.
    public init(rsv: [UInt8]) throws {
        guard rsv.count == 65 else { throw SignatureError.signatureLength(rsv.count, expected: 65) }
        let v = Int(rsv[64])
        let id = v >= 27 ? v - 27 : v
        guard (0...3).contains(id) else { throw SignatureError.recoveryID(v) }
        try self.init(compact: Array(rsv[0..<64]), recoveryID: id)
    }

    /// 65 bytes r || s || v with v = 27 + recovery id, as Ethereum's personal_sign returns.
    public var rsv: [UInt8] { r + s + [UInt8(27 + recoveryID)] }

    /// The plain ECDSA signature, without the recovery id.
    public var signature: ECDSASignature {
        // r and s were range-checked in init, so this cannot fail.
        (try? ECDSASignature(compact: r + s)) ?? ECDSASignature(raw: secp256k1_ecdsa_signature())
    }

    /// Recovers the public key that made this signature over `digest` (32 bytes).
    public func recoverPublicKey(digest: [UInt8]) throws -> PublicKey {
        guard digest.count == 32 else { throw SignatureError.digestLength(digest.count) }
        var sig = try recoverableRaw()
        var key = secp256k1_pubkey()
        guard secpSucceeded(secp256k1_ecdsa_recover(Secp256k1.shared.context, &key, &sig, digest)) else {
            throw SignatureError.recoveryFailed
        }
        return PublicKey(raw: key)
    }

    func recoverableRaw() throws -> secp256k1_ecdsa_recoverable_signature {
        var sig = secp256k1_ecdsa_recoverable_signature()
        guard !hasZeroHalf(r + s), secpSucceeded(secp256k1_ecdsa_recoverable_signature_parse_compact(
            Secp256k1.shared.context, &sig, r + s, Int32(recoveryID))) else {
            throw SignatureError.valueOutOfRange
        }
        return sig
    }

    /// Hex of r || s || v.
    public var description: String { Hex.encode(rsv) }
}

/// libsecp256k1 parses r = 0 or s = 0 without complaint (such signatures just never verify); keyhost reports them.
private func hasZeroHalf(_ rs: [UInt8]) -> Bool {
    rs[0..<32].allSatisfy { $0 == 0 } || rs[32..<64].allSatisfy { $0 == 0 }
}
