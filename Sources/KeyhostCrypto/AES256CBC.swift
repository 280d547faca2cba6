import COpenSSL

/// AES-256 in CBC mode without padding (callers pad, e.g. with ISO 9797-1 method 2 as smart cards do).
public enum AES256CBC {
    /// Encrypts whole 16-byte blocks of `plaintext` under a 32-byte key and 16-byte IV.
    public static func encrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        try run(plaintext, key: key, iv: iv, encrypt: true)
    }

    /// Decrypts whole 16-byte blocks of `ciphertext` under a 32-byte key and 16-byte IV.
    public static func decrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        try run(ciphertext, key: key, iv: iv, encrypt: false)
    }

    private static func run(_ input: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Bool) throws -> [UInt8] {
        guard key.count == 32 else { throw CryptoError.keyLength(key.count, expected: 32, algorithm: "AES-256") }
        guard iv.count == 16 else { throw CryptoError.ivLength(iv.count, expected: 16) }
        guard input.count % 16 == 0 else { throw CryptoError.notBlockAligned(input.count, blockSize: 16) }
        guard input.count <= Int(Int32.max) - 16 else { throw CryptoError.parameter("AES input too large") }
        guard let ctx = EVP_CIPHER_CTX_new() else { OpenSSL.fail("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }  // also wipes the expanded key schedule
        guard EVP_CipherInit_ex2(ctx, OpenSSL.shared.aes256CBC, key, iv, encrypt ? 1 : 0, nil) == 1,
              EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 else {
            throw CryptoError.openSSL("AES-256-CBC init failed: \(OpenSSL.lastError())")
        }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            EVP_CipherUpdate(ctx, buffer.baseAddress, &written, input, Int32(input.count)) == 1
                && EVP_CipherFinal_ex(ctx, buffer.baseAddress! + Int(written), &final) == 1
        }
        guard ok else { throw CryptoError.openSSL("AES-256-CBC failed: \(OpenSSL.lastError())") }
        out.removeLast(out.count - Int(written + final))
        return out
    }
}

/// ISO/IEC 9797-1 padding method 2: append 0x80, then zeros up to the block size.
public enum ISO9797M2 {
    /// `data` padded to a multiple of `blockSize` (always adds at least one byte).
    public static func pad(_ data: [UInt8], blockSize: Int = 16) -> [UInt8] {
        let size = max(blockSize, 1)
        var out = data
        out.append(0x80)
        while out.count % size != 0 { out.append(0) }
        return out
    }

    /// `data` with method-2 padding removed.
    public static func unpad(_ data: [UInt8]) throws -> [UInt8] {
        guard let marker = data.lastIndex(where: { $0 != 0 }), data[marker] == 0x80 else { throw CryptoError.badPadding }
        return Array(data[..<marker])
    }
}
