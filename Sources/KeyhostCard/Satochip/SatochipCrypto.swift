import COpenSSL

/// The primitives of Satochip's secure channel: AES-128-CBC with PKCS#7 padding and HMAC-SHA1, through OpenSSL.
enum SatochipCrypto {
    /// Algorithms fetched once per process (only the calls CKeyhostLoader forwards are available to keyhost).
    nonisolated(unsafe) static let aes128CBC: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-128-CBC", nil)
    nonisolated(unsafe) static let sha1Digest: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)
    nonisolated(unsafe) static let hmac: OpaquePointer? = EVP_MAC_fetch(nil, "HMAC", nil)

    /// AES-128-CBC of `input` under a 16-byte key and IV; PKCS#7 padding added on encrypt, checked on decrypt.
    static func aes128CBC(_ input: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Bool) throws -> [UInt8] {
        guard key.count == 16 else { throw CardCryptoError.keyLength(key.count, expected: 16) }
        guard iv.count == 16 else { throw CardCryptoError.nonceLength(iv.count, expected: 16) }
        guard input.count <= 4096 else { throw CardCryptoError.openSSL("AES-128-CBC input of \(input.count) bytes") }
        guard encrypt || (input.count % 16 == 0 && !input.isEmpty) else { throw CardCryptoError.openSSL("AES-128-CBC decrypt of \(input.count) bytes") }
        guard let cipher = aes128CBC else { throw CardCryptoError.openSSL("EVP_CIPHER_fetch(AES-128-CBC)") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CardCryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_CipherInit_ex2(ctx, cipher, key, iv, encrypt ? 1 : 0, nil) == 1 else {
            throw CardCryptoError.openSSL("AES-128-CBC init")
        }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return input.withUnsafeBufferPointer { inBuffer in
                EVP_CipherUpdate(ctx, base, &written, inBuffer.baseAddress ?? UnsafePointer(base), Int32(input.count)) == 1
                    && EVP_CipherFinal_ex(ctx, base + Int(written), &final) == 1
            }
        }
        // A bad padding on decrypt is the only failure caller input can cause.
        guard ok else { throw CardCryptoError.openSSL(encrypt ? "AES-128-CBC encrypt" : "AES-128-CBC decrypt (bad padding)") }
        out.removeLast(out.count - Int(written + final))
        return out
    }

    /// HMAC-SHA1 of `data` under `key` (20 bytes).
    static func hmacSHA1(key: [UInt8], data: [UInt8]) throws -> [UInt8] {
        guard let mac = hmac, let ctx = EVP_MAC_CTX_new(mac) else { throw CardCryptoError.openSSL("EVP_MAC_CTX_new(HMAC)") }
        defer { EVP_MAC_CTX_free(ctx) }
        let digestName: StaticString = "digest"
        let nameKey = UnsafeRawPointer(digestName.utf8Start).assumingMemoryBound(to: CChar.self)
        var out = [UInt8](repeating: 0, count: 20)
        var length = 0
        let ok = "SHA1".withCString { sha1 -> Bool in
            var params = [OSSL_PARAM_construct_utf8_string(nameKey, UnsafeMutablePointer(mutating: sha1), 0), OSSL_PARAM_construct_end()]
            guard EVP_MAC_CTX_set_params(ctx, &params) == 1, EVP_MAC_init(ctx, key, key.count, nil) == 1 else { return false }
            return out.withUnsafeMutableBufferPointer { buffer in
                data.withUnsafeBufferPointer { d in
                    (d.isEmpty || EVP_MAC_update(ctx, d.baseAddress, d.count) == 1) && EVP_MAC_final(ctx, buffer.baseAddress, &length, 20) == 1
                }
            }
        }
        guard ok, length == 20 else { throw CardCryptoError.openSSL("HMAC-SHA1") }
        return out
    }

    /// SHA-1 of `data` (the card's serial number is the SHA-1 of its CPLC, IIN and CIN).
    static func sha1(_ data: [UInt8]) throws -> [UInt8] {
        guard let md = sha1Digest else { throw CardCryptoError.openSSL("EVP_MD_fetch(SHA1)") }
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            data.withUnsafeBufferPointer { d in EVP_Digest(d.baseAddress, d.count, buffer.baseAddress, &length, md, nil) == 1 }
        }
        guard ok, length == 20 else { throw CardCryptoError.openSSL("SHA-1") }
        return out
    }

    /// Session keys from the ECDH x coordinate: AES key = HMAC-SHA1(x, "sc_key")[0..<16], MAC key = HMAC-SHA1(x, "sc_mac").
    static func sessionKeys(sharedX: [UInt8]) throws -> (aes: [UInt8], mac: [UInt8]) {
        let aes = try hmacSHA1(key: sharedX, data: Array("sc_key".utf8))
        let mac = try hmacSHA1(key: sharedX, data: Array("sc_mac".utf8))
        return (Array(aes.prefix(16)), mac)
    }
}
