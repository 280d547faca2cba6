import Foundation
import Testing
@testable import KeyhostCrypto
import KeyhostTestSupport

extension KeyhostCryptoTests {
    /// keyhost's own SHA-256 (portable C and SHA-NI) against FIPS 180-4's examples and Python's hashlib.
    @Suite("SHA-256 without libcrypto", .serialized)
    struct SHA256Tests {
        /// Each implementation this machine can run: the portable code always, SHA-NI where the CPU has it.
        static func eachImplementation(_ body: (String) throws -> Void) rethrows {
            try SHA256.withPortableCode { try body("portable") }
            if SHA256.usesHardware { try body("SHA-NI") }
        }

        static func incremental(_ message: [UInt8], cuts: [Int]) -> [UInt8] {
            var hash = SHA256()
            var start = 0
            for cut in cuts.sorted() + [message.count] {
                hash.update(Array(message[start..<cut]))
                start = cut
            }
            return hash.finalize()
        }

        @Test("FIPS 180-4 examples, including a million 'a's, in each implementation")
        func publishedExamples() {
            let examples: [([UInt8], String)] = [
                ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
                (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
                (Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8),
                 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
                (Array(repeating: UInt8(ascii: "a"), count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
            ]
            Self.eachImplementation { name in
                for (message, digest) in examples {
                    #expect(Hex.encode(Hash.sha256(message)) == digest, "\(name), \(message.count) bytes")
                    #expect(Hex.encode(Self.incremental(message, cuts: [1, message.count / 3, message.count / 2].filter { $0 <= message.count })) == digest,
                            "\(name), \(message.count) bytes in pieces")
                }
            }
        }

        @Test("Every length from 0 to 300 bytes and a few large ones agree with hashlib, whole and in random pieces")
        func agreesWithHashlib() throws {
            var random = SplitMix64(seed: 0x5A256)
            let lengths = Array(0...300) + [511, 512, 513, 4095, 4096, 65_537, 1 << 20]
            let messages = lengths.map { n in (0..<n).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
            let input = messages.map { $0.isEmpty ? "-" : Hex.encode($0) }.joined(separator: "\n") + "\n"
            let expected = PythonOracle.lines(try PythonOracle.run("sha256_oracle.py", input: Data(input.utf8)))
            #expect(expected.count == messages.count)
            Self.eachImplementation { name in
                for (i, message) in messages.enumerated() where i < expected.count {
                    #expect(Hex.encode(Hash.sha256(message)) == expected[i], "\(name), \(message.count) bytes")
                    let cuts = (0..<3).map { _ in random.below(message.count + 1) }
                    #expect(Hex.encode(Self.incremental(message, cuts: cuts)) == expected[i], "\(name), \(message.count) bytes cut at \(cuts)")
                }
            }
        }

        @Test("Tagged hashes and HASH256 built on it match BIP340's definition computed by hashlib")
        func taggedAndDouble() throws {
            let data = Array("keyhost".utf8)
            let tag = Array("BIP0340/challenge".utf8)
            let tagHash = Hex.encode(Hash.sha256(tag))
            let lines = [Hex.encode(tag), Hex.encode(Hash.sha256(tag) + Hash.sha256(tag) + data), Hex.encode(data)]
            let expected = PythonOracle.lines(try PythonOracle.run("sha256_oracle.py", input: Data((lines.joined(separator: "\n") + "\n").utf8)))
            try #require(expected.count == 3)
            #expect(tagHash == expected[0])
            #expect(Hex.encode(Hash.tagged("BIP0340/challenge", data)) == expected[1])
            let once = try Hex.decode(expected[2])
            #expect(Hash.sha256d(data) == Hash.sha256(once))
        }
    }
}
