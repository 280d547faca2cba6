import COpenSSL

/// Hash functions and MACs (SHA-256 in keyhost's own C, see `SHA256`; SHA-512, RIPEMD-160 and the MACs
/// from OpenSSL; Keccak-256 in Swift).
public enum Hash {
    /// SHA-256 of `data`.
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            data.withUnsafeBytes { SHA256.hash($0, into: UnsafeMutableRawPointer(out.baseAddress!)) }
            count = 32
        }
    }

    /// SHA-512 of `data`.
    public static func sha512(_ data: [UInt8]) -> [UInt8] {
        digest(OpenSSL.shared.sha512, data, 64)
    }

    /// RIPEMD-160 of `data`.
    public static func ripemd160(_ data: [UInt8]) -> [UInt8] {
        digest(OpenSSL.shared.ripemd160, data, 20)
    }

    /// RIPEMD-160 of SHA-256 of `data` (Bitcoin's HASH160).
    public static func hash160(_ data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 20) { out, count in
            data.withUnsafeBytes { hash160(UnsafeRawBufferPointer($0), into: UnsafeMutableRawPointer(out.baseAddress!)) }
            count = 20
        }
    }

    /// SHA-256 of SHA-256 of `data` (Bitcoin's HASH256).
    public static func sha256d(_ data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            data.withUnsafeBytes { sha256d(UnsafeRawBufferPointer($0), into: UnsafeMutableRawPointer(out.baseAddress!)) }
            count = 32
        }
    }

    /// Keccak-256 as used by Ethereum (original Keccak padding, not SHA3-256).
    public static func keccak256(_ data: [UInt8]) -> [UInt8] {
        Keccak256.hash(data)
    }

    /// BIP340 tagged hash: SHA-256(SHA-256(tag) || SHA-256(tag) || data).
    public static func tagged(_ tag: String, _ data: [UInt8]) -> [UInt8] {
        tag == "TapTweak" ? tagged(tagHash: tapTweakTag, data) : tagged(bytes: Array(tag.utf8), data)
    }

    /// BIP340 tagged hash with the tag as bytes: BIP340 defines tags as byte strings, not necessarily UTF-8.
    public static func tagged(bytes tag: [UInt8], _ data: [UInt8]) -> [UInt8] {
        tagged(tagHash: sha256(tag), data)
    }

    private static func tagged(tagHash: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(tagHash)
        hash.update(tagHash)
        hash.update(data)
        return hash.finalize()
    }

    /// SHA-256("TapTweak"), computed once: every taproot address needs it.
    private static let tapTweakTag = sha256(Array("TapTweak".utf8))

    /// HMAC-SHA256 of `data` under `key`.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            key.withUnsafeBytes { k in
                data.withUnsafeBytes { d in
                    hmac(OpenSSL.shared.hmacSHA256Template, key: UnsafeRawBufferPointer(k), data: UnsafeRawBufferPointer(d),
                         into: UnsafeMutableRawBufferPointer(start: out.baseAddress, count: 32))
                }
            }
            count = 32
        }
    }

    /// HMAC-SHA512 of `data` under `key`.
    public static func hmacSHA512(key: [UInt8], data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 64) { out, count in
            key.withUnsafeBytes { k in
                data.withUnsafeBytes { d in
                    hmac(OpenSSL.shared.hmacSHA512Template, key: UnsafeRawBufferPointer(k), data: UnsafeRawBufferPointer(d),
                         into: UnsafeMutableRawBufferPointer(start: out.baseAddress, count: 64))
                }
            }
            count = 64
        }
    }

    // MARK: - Allocation-free forms for hot paths

    @inline(__always)
    static func digest(_ md: OpaquePointer, _ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        var length: UInt32 = 0
        OpenSSL.check(EVP_Digest(input.baseAddress, input.count, out.assumingMemoryBound(to: UInt8.self), &length, md, nil),
                      "EVP_Digest")
    }

    static func hash160(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { inner in
            SHA256.hash(input, into: inner.baseAddress!)
            digest(OpenSSL.shared.ripemd160, UnsafeRawBufferPointer(inner), into: out)
        }
    }

    static func sha256d(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { inner in
            SHA256.hash(input, into: inner.baseAddress!)
            SHA256.hash(UnsafeRawBufferPointer(inner), into: out)
        }
    }

    /// HMAC into `out`; `out.count` must be the digest size.
    static func hmac(_ template: OpaquePointer, key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer,
                     into out: UnsafeMutableRawBufferPointer) {
        guard let ctx = EVP_MAC_CTX_dup(template) else { OpenSSL.fail("EVP_MAC_CTX_dup") }
        defer { EVP_MAC_CTX_free(ctx) }
        // HMAC zero-pads the key to the block size, so an empty key equals a single zero byte;
        // OpenSSL 3.0 rejects a zero-length key, hence the substitution.
        var zero: UInt8 = 0
        if key.isEmpty {
            OpenSSL.check(EVP_MAC_init(ctx, &zero, 1, nil), "EVP_MAC_init")
        } else {
            OpenSSL.check(EVP_MAC_init(ctx, key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count, nil), "EVP_MAC_init")
        }
        if !data.isEmpty {
            OpenSSL.check(EVP_MAC_update(ctx, data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count), "EVP_MAC_update")
        }
        var length = 0
        OpenSSL.check(EVP_MAC_final(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, out.count), "EVP_MAC_final")
    }

    /// An HMAC context keyed once and reused for many messages under the same key, as when deriving
    /// many children of one BIP32 node (the key is the parent's chain code). Re-initialising without a
    /// key restarts from the stored inner/outer pads, skipping key setup; not shareable between threads.
    final class KeyedHMAC {
        private let ctx: OpaquePointer

        init(_ template: OpaquePointer, key: UnsafeRawBufferPointer) {
            guard let ctx = EVP_MAC_CTX_dup(template) else { OpenSSL.fail("EVP_MAC_CTX_dup") }
            self.ctx = ctx
            var zero: UInt8 = 0
            if key.isEmpty {
                OpenSSL.check(EVP_MAC_init(ctx, &zero, 1, nil), "EVP_MAC_init")
            } else {
                OpenSSL.check(EVP_MAC_init(ctx, key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count, nil), "EVP_MAC_init")
            }
        }

        deinit { EVP_MAC_CTX_free(ctx) }  // frees and cleanses the keyed state

        func mac(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
            OpenSSL.check(EVP_MAC_init(ctx, nil, 0, nil), "EVP_MAC_init")
            if !data.isEmpty {
                OpenSSL.check(EVP_MAC_update(ctx, data.baseAddress!.assumingMemoryBound(to: UInt8.self), data.count), "EVP_MAC_update")
            }
            var length = 0
            OpenSSL.check(EVP_MAC_final(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, out.count), "EVP_MAC_final")
        }
    }

    private static func digest(_ md: OpaquePointer, _ data: [UInt8], _ size: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { out, count in
            data.withUnsafeBytes { digest(md, UnsafeRawBufferPointer($0), into: UnsafeMutableRawPointer(out.baseAddress!)) }
            count = size
        }
    }
}
