import Foundation
import Testing
@testable import KeyhostCrypto
import KeyhostTestSupport

extension KeyhostCryptoTests {
    @Suite("Hashes, MACs, KDFs and AES")
    struct HashTests {
        struct KnownAnswers: Decodable {
            struct Digest: Decodable { let input: String; let sha256: String; let sha512: String; let ripemd160: String }
            struct HMAC: Decodable { let key: String; let data: String; let sha256: String; let sha512: String }
            struct HKDF: Decodable { let ikm: String; let salt: String; let info: String; let length: Int; let okm: String }
            struct PBKDF2: Decodable { let password: String; let salt: String; let iterations: Int; let length: Int; let sha256: String }
            let digests: [Digest]
            let hmac: [HMAC]
            let hkdf: [HKDF]
            let pbkdf2: [PBKDF2]
        }

        @Test("SHA-256, SHA-512 and RIPEMD-160 match the published examples")
        func digests() throws {
            let answers: KnownAnswers = try Vectors.json("hash-known-answers.json")
            #expect(answers.digests.count >= 3)
            for d in answers.digests {
                let input = Array(d.input.utf8)
                #expect(Hex.encode(Hash.sha256(input)) == d.sha256, "SHA-256(\(d.input))")
                #expect(Hex.encode(Hash.sha512(input)) == d.sha512, "SHA-512(\(d.input))")
                #expect(Hex.encode(Hash.ripemd160(input)) == d.ripemd160, "RIPEMD-160(\(d.input))")
                #expect(Hash.hash160(input) == Hash.ripemd160(Hash.sha256(input)))
                #expect(Hash.sha256d(input) == Hash.sha256(Hash.sha256(input)))
            }
        }

        @Test("HMAC-SHA256/512 match RFC 4231")
        func hmac() throws {
            let answers: KnownAnswers = try Vectors.json("hash-known-answers.json")
            #expect(answers.hmac.count >= 3)
            for h in answers.hmac {
                #expect(Hex.encode(Hash.hmacSHA256(key: hex(h.key), data: hex(h.data))) == h.sha256)
                #expect(Hex.encode(Hash.hmacSHA512(key: hex(h.key), data: hex(h.data))) == h.sha512)
            }
        }

        @Test("HKDF-SHA256 matches RFC 5869 and PBKDF2-HMAC-SHA256 its published vectors")
        func kdfs() throws {
            let answers: KnownAnswers = try Vectors.json("hash-known-answers.json")
            // RFC 5869 test cases 1-3 and an empty input key, which must stay empty (not become one zero byte).
            #expect(answers.hkdf.count == 4)
            #expect(answers.hkdf.contains { $0.ikm.isEmpty })
            for k in answers.hkdf {
                let okm = try KDF.hkdfSHA256(key: hex(k.ikm), salt: hex(k.salt), info: hex(k.info), length: k.length)
                #expect(Hex.encode(okm.revealedBytes()) == k.okm, "HKDF with IKM \(k.ikm.prefix(8))… of \(k.ikm.count / 2) bytes")
            }
            for p in answers.pbkdf2 {
                let key = try KDF.pbkdf2SHA256(password: Array(p.password.utf8), salt: Array(p.salt.utf8), iterations: p.iterations, length: p.length)
                #expect(Hex.encode(key.revealedBytes()) == p.sha256)
            }
            #expect(throws: CryptoError.self) { try KDF.pbkdf2SHA512(password: [], salt: [], iterations: 0, length: 64) }
            #expect(throws: CryptoError.self) { try KDF.hkdfSHA256(key: [1], salt: [], info: [], length: 255 * 32 + 1) }
        }

        @Test("PBKDF2's interruptible loop (long counts) equals hashlib and OpenSSL's one call")
        func interruptiblePBKDF2() throws {
            var cases: [(String, [UInt8], [UInt8], Int, Int)] = []
            var rng = SystemRandomNumberGenerator()
            for n in 0..<12 {
                let password = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let salt = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                // Lengths across block boundaries; counts both sides of the switch to keyhost's own loop.
                let length = [1, 31, 32, 33, 64, 65, 100, 130][n % 8]
                let iterations = n < 6 ? Int.random(in: 1...3000, using: &rng) : KDF.interruptibleAbove + Int.random(in: 1...5000, using: &rng)
                cases.append((n % 2 == 0 ? "sha256" : "sha512", password, salt, iterations, length))
            }
            let input = cases.map { "\($0.0) \(Hex.encode($0.1).isEmpty ? "-" : Hex.encode($0.1)) \(Hex.encode($0.2).isEmpty ? "-" : Hex.encode($0.2)) \($0.3) \($0.4)" }
            let expected = PythonOracle.lines(try PythonOracle.run("pbkdf2_oracle.py", input: Data((input.joined(separator: "\n") + "\n").utf8)))
            #expect(expected.count == cases.count)
            for (i, c) in cases.enumerated() where i < expected.count {
                let template = c.0 == "sha256" ? OpenSSL.shared.hmacSHA256Template : OpenSSL.shared.hmacSHA512Template
                let loop = try KDF.pbkdf2Interruptible(template, digestSize: c.0 == "sha256" ? 32 : 64, c.1, c.2, c.3, c.4)
                #expect(Hex.encode(loop.revealedBytes()) == expected[i], "\(c.0) \(c.3) rounds, \(c.4) bytes")
                let viaPublic = c.0 == "sha256"
                    ? try KDF.pbkdf2SHA256(password: c.1, salt: c.2, iterations: c.3, length: c.4)
                    : try KDF.pbkdf2SHA512(password: c.1, salt: c.2, iterations: c.3, length: c.4)
                #expect(Hex.encode(viaPublic.revealedBytes()) == expected[i])
            }
        }

        @Test("Keccak-256 matches every byte-aligned entry of the Keccak team's ShortMsgKAT_256")
        func keccakKAT() throws {
            struct KAT: Decodable { struct Entry: Decodable { let msg: String; let md: String }; let vectors: [Entry] }
            let kat: KAT = try Vectors.json("keccak256-shortmsgkat.json")
            #expect(kat.vectors.count == 256)
            for entry in kat.vectors {
                #expect(Hex.encode(Keccak256.hash(hex(entry.msg))) == entry.md, "Keccak-256 of \(entry.msg.count / 2) bytes")
            }
            // Distinct from SHA3-256, whose padding differs (SHA3-256("") is a7ffc6f8...).
            #expect(Hex.encode(Hash.keccak256([])) == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        }

        @Test("AES-256-CBC matches NIST CBCMMT256 in both directions")
        func aesNIST() throws {
            let text = try Vectors.text("aes256-cbc-CBCMMT256.rsp")
            var encrypting = true
            var fields: [String: String] = [:]
            var checked = 0
            for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if line == "[ENCRYPT]" { encrypting = true; continue }
                if line == "[DECRYPT]" { encrypting = false; continue }
                let parts = line.components(separatedBy: " = ")
                guard parts.count == 2 else { continue }
                fields[parts[0]] = parts[1]
                guard let key = fields["KEY"], let iv = fields["IV"], let pt = fields["PLAINTEXT"], let ct = fields["CIPHERTEXT"] else { continue }
                if encrypting {
                    #expect(try AES256CBC.encrypt(hex(pt), key: hex(key), iv: hex(iv)) == hex(ct))
                } else {
                    #expect(try AES256CBC.decrypt(hex(ct), key: hex(key), iv: hex(iv)) == hex(pt))
                }
                checked += 1
                fields = [:]
            }
            #expect(checked == 20)
        }

        @Test("AES and ISO 9797-1 M2 reject bad input with typed errors")
        func aesErrors() throws {
            let key = [UInt8](repeating: 1, count: 32), iv = [UInt8](repeating: 2, count: 16)
            #expect(throws: CryptoError.keyLength(16, expected: 32, algorithm: "AES-256")) { try AES256CBC.encrypt([UInt8](repeating: 0, count: 16), key: Array(key[0..<16]), iv: iv) }
            #expect(throws: CryptoError.ivLength(8, expected: 16)) { try AES256CBC.encrypt([], key: key, iv: Array(iv[0..<8])) }
            #expect(throws: CryptoError.notBlockAligned(15, blockSize: 16)) { try AES256CBC.decrypt([UInt8](repeating: 0, count: 15), key: key, iv: iv) }
            for n in [0, 1, 15, 16, 17, 31] {
                let data = Array((0..<n).map { UInt8($0 + 1) })
                let padded = ISO9797M2.pad(data)
                #expect(padded.count % 16 == 0 && padded.count > n)
                #expect(try ISO9797M2.unpad(padded) == data)
                let roundTrip = try ISO9797M2.unpad(AES256CBC.decrypt(AES256CBC.encrypt(padded, key: key, iv: iv), key: key, iv: iv))
                #expect(roundTrip == data)
            }
            #expect(throws: CryptoError.badPadding) { try ISO9797M2.unpad([1, 2, 3, 0]) }
            #expect(throws: CryptoError.badPadding) { try ISO9797M2.unpad([0, 0]) }
        }

        @Test("Hex decoding reports the bad character and its position")
        func hexErrors() {
            #expect(throws: HexError.badCharacter(position: 3, character: "g")) { try Hex.decode("abcg") }
            #expect(throws: HexError.oddLength(3)) { try Hex.decode("abc") }
            #expect((try? Hex.decode("0xABcd")) == [0xab, 0xcd])
            #expect(HexError.badCharacter(position: 3, character: "g").description.contains("position 3"))
        }
    }
}
