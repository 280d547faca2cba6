import COpenSSL
import KeyhostCrypto

/// Arithmetic on 32-byte big-endian secp256k1 scalars that KeyhostCrypto does not expose.
enum Scalar {
    /// The group order n.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
        0xBA, 0xAE, 0xDC, 0xE6, 0xAF, 0x48, 0xA0, 0x3B, 0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41,
    ]

    /// n - `value` for 0 < value < n (the negated private key).
    static func negate(_ value: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in stride(from: 31, through: 0, by: -1) {
            var d = Int(order[i]) - Int(value[i]) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 256 }
            out[i] = UInt8(d)
        }
        return out
    }

    /// The key whose public point has an even y: `key` or its negation (BIP340's normalisation).
    static func evenY(_ key: PrivateKey) throws -> PrivateKey {
        if key.publicKey.compressed[0] == 0x02 { return key }
        var bytes = key.revealedBytes()
        defer { wipe(&bytes) }
        var negated = negate(bytes)
        defer { wipe(&negated) }
        return try PrivateKey(bytes: negated)
    }
}

/// Overwrites an ordinary array that held secret bytes.
func wipe(_ bytes: inout [UInt8]) {
    let count = bytes.count
    bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, count) }
}
