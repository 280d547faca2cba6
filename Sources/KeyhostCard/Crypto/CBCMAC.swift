import KeyhostCrypto

/// AES-256 CBC-MAC with a zero IV over block-aligned data (Keycard secure channel v1).
enum CBCMAC {
    static func mac(key: [UInt8], data: [UInt8]) throws -> [UInt8] {
        let out = try AES256CBC.encrypt(data, key: key, iv: [UInt8](repeating: 0, count: 16))
        return Array(out.suffix(16))
    }
}
