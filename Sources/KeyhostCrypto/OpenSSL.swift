import COpenSSL

/// OpenSSL algorithm objects fetched once per process; implicit per-call fetches cost 2-3x on hot paths.
final class OpenSSL: @unchecked Sendable {
    static let shared = OpenSSL()

    let sha256: OpaquePointer
    let sha512: OpaquePointer
    let ripemd160: OpaquePointer
    let aes256CBC: OpaquePointer
    /// HMAC contexts with their digest already bound; each call duplicates one instead of re-resolving the digest by name.
    let hmacSHA256Template: OpaquePointer
    let hmacSHA512Template: OpaquePointer

    private init() {
        sha256 = OpenSSL.fetchDigest("SHA2-256")
        sha512 = OpenSSL.fetchDigest("SHA2-512")
        ripemd160 = OpenSSL.fetchDigest("RIPEMD-160")
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil) else { OpenSSL.fail("EVP_CIPHER_fetch(AES-256-CBC)") }
        aes256CBC = cipher
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { OpenSSL.fail("EVP_MAC_fetch(HMAC)") }
        hmacSHA256Template = OpenSSL.hmacTemplate(mac, digest: "SHA2-256")
        hmacSHA512Template = OpenSSL.hmacTemplate(mac, digest: "SHA2-512")
        EVP_MAC_free(mac)  // the templates hold their own references
    }

    private static func fetchDigest(_ name: String) -> OpaquePointer {
        guard let md = EVP_MD_fetch(nil, name, nil) else { fail("EVP_MD_fetch(\(name))") }
        return md
    }

    private static func hmacTemplate(_ mac: OpaquePointer, digest: String) -> OpaquePointer {
        guard let ctx = EVP_MAC_CTX_new(mac) else { fail("EVP_MAC_CTX_new(HMAC)") }
        let ok = digest.withCString { name -> Int32 in
            var params = [
                OSSL_PARAM_construct_utf8_string(OpenSSL.paramName("digest"), UnsafeMutablePointer(mutating: name), 0),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_MAC_CTX_set_params(ctx, &params)
        }
        guard ok == 1 else { fail("EVP_MAC_CTX_set_params(HMAC digest \(digest))") }
        return ctx
    }

    /// An OSSL_PARAM keeps a pointer to its key name, so the name must outlive it; a Swift String passed
    /// as `const char *` is only a temporary copy (short names are not even stored in static memory).
    /// Static strings live for the whole process. The names are those of OSSL_*_PARAM_DIGEST/KEY/SALT/INFO.
    static func paramName(_ name: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// A missing algorithm means a broken libcrypto install, not bad input, so there is nothing a caller could do.
    static func fail(_ what: String) -> Never {
        let code = ERR_get_error()
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        fatalError("keyhost: OpenSSL \(what) failed (\(reason)); libcrypto 3.0 with the default provider is required")
    }

    /// The one check for OpenSSL's 1-is-success convention on calls whose failure can only be internal.
    @inline(__always)
    static func check(_ rc: Int32, _ what: @autoclosure () -> String) {
        if rc != 1 { fail(what()) }
    }

    /// Last OpenSSL error as text, for errors that can follow from caller input.
    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail from OpenSSL" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
