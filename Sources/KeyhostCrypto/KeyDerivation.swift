import COpenSSL

/// Password- and key-based key derivation through OpenSSL.
public enum KDF {
    /// PBKDF2-HMAC-SHA512 (BIP39 uses 2048 iterations and 64 bytes).
    public static func pbkdf2SHA512(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws -> SecretBytes {
        try password.withUnsafeBytes { try pbkdf2(OpenSSL.shared.sha512, UnsafeRawBufferPointer($0), salt, iterations, length) }
    }

    /// PBKDF2-HMAC-SHA256.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws -> SecretBytes {
        try password.withUnsafeBytes { try pbkdf2(OpenSSL.shared.sha256, UnsafeRawBufferPointer($0), salt, iterations, length) }
    }

    /// HKDF-SHA256 (RFC 5869): extract with `salt`, expand with `info` to `length` bytes (at most 8160).
    public static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> SecretBytes {
        guard (1...255 * 32).contains(length) else { throw CryptoError.parameter("HKDF-SHA256 output of \(length) bytes; use 1...8160") }
        guard let ctx = EVP_KDF_CTX_new(OpenSSL.shared.hkdf) else { OpenSSL.fail("EVP_KDF_CTX_new(HKDF)") }
        defer { EVP_KDF_CTX_free(ctx) }
        var ok = false
        let out = SecretBytes(count: length) { out in
            // OSSL_PARAM only borrows these pointers, so every buffer must stay alive across EVP_KDF_derive.
            var key = key.isEmpty ? [0] : key  // an empty HKDF key is rejected by OpenSSL; HMAC pads it with zeros anyway
            var salt = salt, info = info
            var digestName = Array("SHA2-256".utf8CString)
            key.withUnsafeMutableBytes { k in
                salt.withUnsafeMutableBytes { s in
                    info.withUnsafeMutableBytes { i in
                        digestName.withUnsafeMutableBufferPointer { d in
                            // An empty salt or info is left out: OpenSSL rejects a zero-length octet parameter,
                            // and RFC 5869 defines a missing salt as HashLen zero bytes, which is what OpenSSL uses.
                            var params = [
                                OSSL_PARAM_construct_utf8_string(OpenSSL.paramName("digest"), d.baseAddress, 0),
                                OSSL_PARAM_construct_octet_string(OpenSSL.paramName("key"), k.baseAddress, k.count),
                            ]
                            if s.count > 0 { params.append(OSSL_PARAM_construct_octet_string(OpenSSL.paramName("salt"), s.baseAddress, s.count)) }
                            if i.count > 0 { params.append(OSSL_PARAM_construct_octet_string(OpenSSL.paramName("info"), i.baseAddress, i.count)) }
                            params.append(OSSL_PARAM_construct_end())
                            ok = EVP_KDF_derive(ctx, out.bindMemory(to: UInt8.self).baseAddress, length, &params) == 1
                        }
                    }
                }
            }
        }
        guard ok else { throw CryptoError.openSSL("HKDF-SHA256 failed: \(OpenSSL.lastError())") }
        return out
    }

    private static func pbkdf2(_ md: OpaquePointer, _ password: UnsafeRawBufferPointer, _ salt: [UInt8],
                               _ iterations: Int, _ length: Int) throws -> SecretBytes {
        guard (1...Int(Int32.max)).contains(iterations) else { throw CryptoError.parameter("PBKDF2 with \(iterations) iterations; use at least 1") }
        guard (1...1 << 20).contains(length) else { throw CryptoError.parameter("PBKDF2 output of \(length) bytes; use 1...1048576") }
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else { throw CryptoError.parameter("PBKDF2 input too large") }
        var ok = false
        let out = SecretBytes(count: length) { out in
            // A NULL password is allowed by OpenSSL and means the empty password.
            ok = PKCS5_PBKDF2_HMAC(password.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(password.count),
                                   salt, Int32(salt.count), Int32(iterations), md, Int32(length),
                                   out.bindMemory(to: UInt8.self).baseAddress) == 1
        }
        guard ok else { throw CryptoError.openSSL("PBKDF2 failed: \(OpenSSL.lastError())") }
        return out
    }
}
