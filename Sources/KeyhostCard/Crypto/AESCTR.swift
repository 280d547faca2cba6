import COpenSSL

/// AES-128-CTR with a 16-byte initial counter, as a TAPSIGNER encrypts its backup (counter zero).
/// Encryption and decryption are the same operation.
public enum AESCTR {
    /// Fetched once and kept for the process, as KeyhostCrypto keeps its ciphers (the loader forwards no free).
    private final class Cipher: @unchecked Sendable {
        let pointer = EVP_CIPHER_fetch(nil, "AES-128-CTR", nil)
    }
    private static let cipher = Cipher()

    public static func apply(_ input: [UInt8], key: [UInt8], iv: [UInt8] = [UInt8](repeating: 0, count: 16)) throws -> [UInt8] {
        guard key.count == 16 else { throw CardCryptoError.keyLength(key.count, expected: 16) }
        guard iv.count == 16 else { throw CardCryptoError.nonceLength(iv.count, expected: 16) }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CardCryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard let cipher = cipher.pointer, EVP_EncryptInit_ex(ctx, cipher, nil, key, iv) == 1 else { throw CardCryptoError.openSSL("AES-128-CTR init") }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return input.withUnsafeBufferPointer { EVP_EncryptUpdate(ctx, base, &written, $0.baseAddress ?? UnsafePointer(base), Int32(input.count)) == 1 }
        }
        guard ok, Int(written) == input.count else { throw CardCryptoError.openSSL("AES-128-CTR update") }
        out.removeLast(out.count - input.count)
        return out
    }
}
