/// A private or public key that cannot be used.
public enum KeyError: Error, Equatable, CustomStringConvertible {
    /// The private key is not 32 bytes.
    case privateKeyLength(Int)
    /// The private key is zero or not below the curve order n.
    case privateKeyOutOfRange
    /// The public key has a length other than 33 (compressed), 65 (uncompressed) or 32 (x-only).
    case publicKeyLength(Int, expected: String)
    /// The first byte of a serialized public key is not 02, 03 or 04.
    case publicKeyPrefix(UInt8)
    /// The coordinates do not describe a point on secp256k1.
    case publicKeyNotOnCurve
    /// A tweak or derivation step produced an invalid key (probability about 2^-127).
    case tweakOutOfRange
    /// A WIF string that does not decode to a private key.
    case wif(String)

    public var description: String {
        switch self {
        case .privateKeyLength(let n):
            return "invalid private key: \(n) bytes; a secp256k1 private key is exactly 32 bytes"
        case .privateKeyOutOfRange:
            return "invalid private key: value is 0 or not below the curve order n; pick a value in 1..n-1"
        case .publicKeyLength(let n, let expected):
            return "invalid public key: \(n) bytes; expected \(expected)"
        case .publicKeyPrefix(let p):
            return "invalid public key: prefix byte 0x\(Hex.encode([p])) is not 02 or 03 (compressed) or 04 (uncompressed)"
        case .publicKeyNotOnCurve:
            return "invalid public key: the point is not on the secp256k1 curve; check the key was copied completely"
        case .tweakOutOfRange:
            return "invalid tweak: the tweak is not below the curve order or gives the point at infinity; use the next index"
        case .wif(let reason):
            return "invalid WIF private key: \(reason)"
        }
    }
}

/// A signature, digest or message that cannot be signed, parsed or recovered.
public enum SignatureError: Error, Equatable, CustomStringConvertible {
    /// ECDSA and recovery sign a 32-byte digest; hash the message first.
    case digestLength(Int)
    /// A compact signature must be 64 bytes (r || s), a recoverable one 65 (r || s || v).
    case signatureLength(Int, expected: Int)
    /// DER bytes that do not parse as an ECDSA signature.
    case invalidDER
    /// A DER signature longer than any secp256k1 signature (72 bytes); checked before parsing.
    case derTooLong(Int)
    /// r or s is zero or not below the curve order.
    case valueOutOfRange
    /// The recovery id (v) is not 0...3 (or 27...30 / 31...34 / 35...42 in the Ethereum and Bitcoin encodings).
    case recoveryID(Int)
    /// No public key can be recovered from this signature and digest.
    case recoveryFailed
    /// A Schnorr auxiliary random value that is not 32 bytes.
    case auxiliaryRandomLength(Int)
    /// A Bitcoin signed-message signature that is not valid base64 of 65 bytes.
    case base64

    public var description: String {
        switch self {
        case .digestLength(let n):
            return "invalid digest: \(n) bytes; ECDSA signs a 32-byte hash, so hash the message (e.g. sha256 or keccak256) first"
        case .signatureLength(let n, let expected):
            return "invalid signature: \(n) bytes; expected \(expected) bytes"
        case .derTooLong(let n):
            return "invalid signature: \(n) bytes is over the 72-byte limit of a DER-encoded secp256k1 signature"
        case .invalidDER:
            return "invalid signature: not a DER-encoded ECDSA signature (30 len 02 len r 02 len s)"
        case .valueOutOfRange:
            return "invalid signature: r or s is zero or not below the curve order n"
        case .recoveryID(let v):
            return "invalid signature: recovery id \(v) is not 0...3 (v 27/28 for Ethereum, header 27...42 for Bitcoin messages)"
        case .recoveryFailed:
            return "invalid signature: no public key can be recovered from it for this message"
        case .auxiliaryRandomLength(let n):
            return "invalid Schnorr auxiliary randomness: \(n) bytes; BIP340 uses exactly 32 bytes"
        case .base64:
            return "invalid signature: not base64 of a 65-byte compact signature"
        }
    }
}
