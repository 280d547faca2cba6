import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    /// keyhost's trimming (KeyhostCrypto no longer imports Foundation) against Foundation's own.
    @Suite("Whitespace trimming")
    struct WhitespaceTests {
        /// Every separator, control and newline-like scalar, plus letters and a combining mark.
        static let alphabet: [Unicode.Scalar] = {
            var scalars: [Unicode.Scalar] = ["a", "Z", "/", "'", "\u{301}", "\u{1F600}", "\u{FEFF}", "\u{200B}"]
            for value in UInt32(0)...0x3000 {
                guard let scalar = Unicode.Scalar(value) else { continue }
                switch scalar.properties.generalCategory {
                case .spaceSeparator, .lineSeparator, .paragraphSeparator, .control: scalars.append(scalar)
                default: break
                }
            }
            return scalars
        }()

        @Test("every scalar alone: trimmed away exactly when Foundation trims it")
        func everyScalar() {
            var mismatches: [String] = []
            for value in UInt32(0)...0x10FFFF {
                guard let scalar = Unicode.Scalar(value) else { continue }
                let text = String(scalar)
                if String.isWhitespace(scalar) != text.trimmingCharacters(in: .whitespaces).isEmpty { mismatches.append("whitespaces U+\(String(value, radix: 16))") }
                if String.isWhitespaceOrNewline(scalar) != text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    mismatches.append("whitespacesAndNewlines U+\(String(value, radix: 16))")
                }
            }
            #expect(mismatches.isEmpty, "\(mismatches.prefix(20))")
        }

        @Test("equals trimmingCharacters(in: .whitespaces / .whitespacesAndNewlines) on 20 000 random strings")
        func matchesFoundation() {
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<20_000 {
                var view = String.UnicodeScalarView()
                for _ in 0..<Int.random(in: 0...8, using: &generator) {
                    view.append(Self.alphabet.randomElement(using: &generator)!)
                }
                let text = String(view)
                let spaces = text.trimming(String.isWhitespace)
                let expectedSpaces = text.trimmingCharacters(in: .whitespaces)
                #expect(Array(spaces.unicodeScalars) == Array(expectedSpaces.unicodeScalars), "\(Array(text.unicodeScalars))")
                let all = text.trimming(String.isWhitespaceOrNewline)
                let expectedAll = text.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(Array(all.unicodeScalars) == Array(expectedAll.unicodeScalars), "\(Array(text.unicodeScalars))")
            }
        }
    }
}
