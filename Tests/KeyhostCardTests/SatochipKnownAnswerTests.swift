import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The secure channel's primitives against their published vectors, and the session keys against values
/// computed with Python's hmac/hashlib (the same derivation pysatochip's SecureChannel.py performs).
@Suite struct SatochipKnownAnswerTests {
    @Test func sha1() throws {
        #expect(Hex.encode(try SatochipCrypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")  // FIPS 180
    }

    @Test func hmacSHA1() throws {
        // RFC 2202 test cases 1 and 2.
        #expect(Hex.encode(try SatochipCrypto.hmacSHA1(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8)))
                == "b617318655057264e28bc0b6fb378c8ef146be00")
        #expect(Hex.encode(try SatochipCrypto.hmacSHA1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
                == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    @Test func aes128CBC() throws {
        // NIST SP 800-38A F.2.1, first block; PKCS#7 then adds one block of 0x10.
        let key = hex("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = hex("000102030405060708090a0b0c0d0e0f")
        let out = try SatochipCrypto.aes128CBC(hex("6bc1bee22e409f96e93d7e117393172a"), key: key, iv: iv, encrypt: true)
        #expect(out.count == 32)
        #expect(Hex.encode(Array(out.prefix(16))) == "7649abac8119b246cee98e9b12e9197d")
        #expect(try SatochipCrypto.aes128CBC(out, key: key, iv: iv, encrypt: false) == hex("6bc1bee22e409f96e93d7e117393172a"))
        var bad = out
        bad[31] ^= 0x55
        #expect(throws: CardCryptoError.self) { try SatochipCrypto.aes128CBC(bad, key: key, iv: iv, encrypt: false) }
    }

    @Test func sessionKeys() throws {
        // hmac.new(x, b"sc_key", sha1).digest()[:16] and hmac.new(x, b"sc_mac", sha1).digest() for x = 01 * 32.
        let keys = try SatochipCrypto.sessionKeys(sharedX: [UInt8](repeating: 1, count: 32))
        #expect(Hex.encode(keys.aes) == "c762823ab0243b3f1cf5c5ccd0ca1901")
        #expect(Hex.encode(keys.mac) == "1da1a02b6bf0d65a1bd63ea72d7cce5637302ef5")
    }
}
