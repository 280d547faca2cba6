import COpenSSL

/// Password- and key-based key derivation through OpenSSL.
public enum KDF {
    /// PBKDF2-HMAC-SHA512 (BIP39 uses 2048 iterations and 64 bytes).
    public static func pbkdf2SHA512(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws -> SecretBytes {
        if iterations > interruptibleAbove {
            return try pbkdf2Interruptible(OpenSSL.shared.hmacSHA512Template, digestSize: 64, password, salt, iterations, length)
        }
        return try password.withUnsafeBytes { try pbkdf2(OpenSSL.shared.sha512, UnsafeRawBufferPointer($0), salt, iterations, length) }
    }

    /// PBKDF2-HMAC-SHA256.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws -> SecretBytes {
        if iterations > interruptibleAbove {
            return try pbkdf2Interruptible(OpenSSL.shared.hmacSHA256Template, digestSize: 32, password, salt, iterations, length)
        }
        return try password.withUnsafeBytes { try pbkdf2(OpenSSL.shared.sha256, UnsafeRawBufferPointer($0), salt, iterations, length) }
    }

    /// Above this many iterations (tens of milliseconds), PBKDF2 runs in keyhost's own loop, which Ctrl-C can stop;
    /// OpenSSL's one call could not be stopped for minutes. Both give the same bytes (tested against each other and hashlib).
    static let interruptibleAbove = 100_000

    /// RFC 8018 PBKDF2 over a keyed HMAC: T_i = U_1 ^ … ^ U_c, U_1 = PRF(P, S || INT(i)), U_j = PRF(P, U_{j-1}).
    static func pbkdf2Interruptible(_ template: OpaquePointer, digestSize: Int, _ password: [UInt8], _ salt: [UInt8],
                                    _ iterations: Int, _ length: Int) throws -> SecretBytes {
        guard (1...Int(Int32.max)).contains(iterations) else { throw CryptoError.parameter("PBKDF2 with \(iterations) iterations; use at least 1") }
        guard (1...1 << 20).contains(length) else { throw CryptoError.parameter("PBKDF2 output of \(length) bytes; use 1...1048576") }
        let prf = password.withUnsafeBytes { Hash.KeyedHMAC(template, key: $0) }
        var u = [UInt8](repeating: 0, count: digestSize), next = u, t = u
        defer { zero(&u); zero(&next); zero(&t) }
        var failure: Error?
        let out = SecretBytes(count: length) { out in
            var written = 0
            var block: UInt32 = 1
            while written < length, failure == nil {
                var first = salt + [UInt8(block >> 24), UInt8(truncatingIfNeeded: block >> 16), UInt8(truncatingIfNeeded: block >> 8), UInt8(truncatingIfNeeded: block)]
                first.withUnsafeBytes { input in u.withUnsafeMutableBytes { prf.mac(input, into: $0) } }
                t = u
                for round in 1..<iterations {
                    // A check every 4096 rounds: about 5 ms of HMAC-SHA512.
                    if round & 4095 == 0, Interruption.isRequested { failure = InterruptedError(); break }
                    u.withUnsafeBytes { input in next.withUnsafeMutableBytes { prf.mac(input, into: $0) } }
                    swap(&u, &next)
                    for k in 0..<digestSize { t[k] ^= u[k] }
                }
                let take = min(digestSize, length - written)
                t.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[written..<written + take]).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<take])) }
                written += take
                block &+= 1
                zero(&first)
            }
        }
        if let failure { throw failure }
        return out
    }

    /// HKDF-SHA256 (RFC 5869): extract with `salt`, expand with `info` to `length` bytes (at most 8160).
    ///
    /// Written over HMAC rather than OpenSSL's HKDF, which rejects an empty input key: substituting one
    /// zero byte (as HMAC may for its *key*) would be wrong here, where the input key is HMAC's *data*.
    public static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> SecretBytes {
        guard (1...255 * 32).contains(length) else { throw CryptoError.parameter("HKDF-SHA256 output of \(length) bytes; use 1...8160") }
        // Extract: PRK = HMAC(salt, IKM); a missing salt is HashLen zero bytes (the same HMAC key as an empty one).
        var prk = Hash.hmacSHA256(key: salt, data: key)
        defer { zero(&prk) }
        // Expand: T(i) = HMAC(PRK, T(i-1) || info || i), OKM = the first `length` bytes of T(1) || T(2) || ...
        return SecretBytes(count: length) { out in
            var block = [UInt8]()
            defer { zero(&block) }
            var written = 0
            var counter: UInt8 = 1
            while written < length {
                var input = block + info + [counter]
                let next = Hash.hmacSHA256(key: prk, data: input)
                zero(&input)
                zero(&block)
                block = next
                let take = min(32, length - written)
                block.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[written..<written + take]).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<take])) }
                written += take
                counter &+= 1
            }
        }
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
