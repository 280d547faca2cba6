import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    /// keyhost's own NFKD (it replaced Foundation's, which kept ICU on the start-up path) against
    /// Python's unicodedata: every assigned code point alone, then random strings.
    @Suite("NFKD")
    struct NFKDTests {
        static func string(_ hex: Substring) -> String {
            var scalars = String.UnicodeScalarView()
            for word in hex.split(separator: " ") {
                if let value = UInt32(word, radix: 16), let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
            }
            return String(scalars)
        }

        static func hexScalars(_ text: String) -> String {
            text.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
        }

        @Test("equals Python's unicodedata.normalize('NFKD') on every code point and 20 000 random strings")
        func oracle() throws {
            let output = String(decoding: try Oracle.run("nfkd_oracle.py", ["20000"]), as: UTF8.self)
            var cases = 0, mismatches = 0
            for line in output.split(separator: "\n") where !line.hasPrefix("#") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                try #require(fields.count == 2, "oracle line: \(line)")
                cases += 1
                let actual = Self.hexScalars(NFKD.normalize(Self.string(fields[0])))
                if actual != String(fields[1]) {
                    mismatches += 1
                    if mismatches <= 10 { Issue.record("NFKD(\(fields[0])) = \(actual), Python says \(fields[1])") }
                }
            }
            #expect(cases > 250_000)
            #expect(mismatches == 0)
        }

        @Test("known forms: compatibility, canonical reordering, Hangul, ASCII untouched")
        func knownForms() {
            #expect(NFKD.normalize("abandon about") == "abandon about")
            #expect(NFKD.normalize("") == "")
            // Fullwidth letters and the ligature fi map to ASCII; NBSP to a space.
            #expect(NFKD.normalize("\u{FF41}\u{FF42}\u{FB01}\u{A0}") == "abfi ")
            // é decomposes; a dot below (220) sorts before an acute (230) whichever came first.
            // (String's == is canonical equivalence, so forms are compared as scalars.)
            #expect(Self.hexScalars(NFKD.normalize("caf\u{E9}")) == "63 61 66 65 301")
            #expect(Self.hexScalars(NFKD.normalize("q\u{301}\u{323}")) == "71 323 301")
            // Hangul LV and LVT syllables, and the BIP39 Japanese vectors' ㍍.
            #expect(Self.hexScalars(NFKD.normalize("\u{AC00}\u{AC01}")) == "1100 1161 1100 1161 11A8")
            #expect(Self.hexScalars(NFKD.normalize("\u{334D}")) == "30E1 30FC 30C8 30EB")
        }
    }
}
