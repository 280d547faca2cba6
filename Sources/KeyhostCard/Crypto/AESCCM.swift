import COpenSSL

/// AES-128-CCM (NIST SP 800-38C) with a 13-byte nonce, an 8-byte tag and no associated data,
/// as Keycard secure channel v2 uses it. Built on OpenSSL's EVP interface.
public enum AESCCM {
    public static let nonceSize = 13
    public static let tagSize = 8

    /// Ciphertext followed by the 8-byte tag.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        try check(key: key, nonce: nonce)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CardCryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ccm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceSize), nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), nil) == 1,
              EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1 else {
            throw CardCryptoError.openSSL("AES-128-CCM encrypt init")
        }
        var out = [UInt8](repeating: 0, count: plaintext.count + tagSize)
        var written: Int32 = 0
        // CCM needs the total length up front; with no AAD one update call carries it implicitly.
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return plaintext.withUnsafeBufferPointer { input in
                EVP_EncryptUpdate(ctx, base, &written, input.baseAddress ?? UnsafePointer(base), Int32(plaintext.count)) == 1
            }
        }
        guard ok, Int(written) == plaintext.count else { throw CardCryptoError.openSSL("AES-128-CCM encrypt") }
        var final: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(ctx, &scratch, &final) == 1 else { throw CardCryptoError.openSSL("AES-128-CCM final") }
        var tag = [UInt8](repeating: 0, count: tagSize)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), &tag) == 1 else {
            throw CardCryptoError.openSSL("AES-128-CCM get tag")
        }
        out.replaceSubrange(plaintext.count..<out.count, with: tag)
        return out
    }

    /// The plaintext, or nil when the tag does not verify.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8]? {
        try check(key: key, nonce: nonce)
        guard sealed.count >= tagSize else { return nil }
        let ciphertext = Array(sealed[..<(sealed.count - tagSize)])
        var tag = Array(sealed[(sealed.count - tagSize)...])
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CardCryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_DecryptInit_ex(ctx, EVP_aes_128_ccm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceSize), nil) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), &tag) == 1,
              EVP_DecryptInit_ex(ctx, nil, nil, key, nonce) == 1 else {
            throw CardCryptoError.openSSL("AES-128-CCM decrypt init")
        }
        var out = [UInt8](repeating: 0, count: max(ciphertext.count, 1))
        var written: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return ciphertext.withUnsafeBufferPointer { input in
                // For CCM, this single update also checks the tag; it fails when the tag does not match.
                EVP_DecryptUpdate(ctx, base, &written, input.baseAddress ?? UnsafePointer(base), Int32(ciphertext.count)) == 1
            }
        }
        guard ok else { return nil }
        return Array(out[0..<Int(written)])
    }

    private static func check(key: [UInt8], nonce: [UInt8]) throws {
        guard key.count == 16 else { throw CardCryptoError.keyLength(key.count, expected: 16) }
        guard nonce.count == nonceSize else { throw CardCryptoError.nonceLength(nonce.count, expected: nonceSize) }
    }
}
