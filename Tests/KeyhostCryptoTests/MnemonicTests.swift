import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("BIP39 mnemonics")
    struct MnemonicTests {
        struct File: Decodable {
            struct Vector: Decodable { let entropy: String; let mnemonic: String; let seed: String; let xprv: String }
            let passphrase: String
            let vectors: [Vector]
        }

        @Test("English wordlist is bitcoin/bips english.txt, byte for byte")
        func wordlist() throws {
            let official = try Vectors.text("bip39-english-wordlist.txt").split(whereSeparator: \.isNewline).map(String.init)
            #expect(official.count == 2048)
            #expect(BIP39English.words == official)
            #expect(Hex.encode(Hash.sha256(Array((BIP39English.words.joined(separator: "\n") + "\n").utf8)))
                    == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda")
        }

        @Test("Trezor vectors: entropy <-> words, seed with passphrase TREZOR, master xprv")
        func trezorVectors() throws {
            let file: File = try Vectors.json("bip39-english.json")
            #expect(file.vectors.count == 24)
            for v in file.vectors {
                let fromEntropy = try Mnemonic(entropy: hex(v.entropy))
                #expect(fromEntropy.phrase == v.mnemonic)
                let parsed = try Mnemonic(phrase: v.mnemonic)
                #expect(Hex.encode(parsed.entropy.revealedBytes()) == v.entropy)
                let seed = parsed.seed(passphrase: file.passphrase)
                #expect(Hex.encode(seed.revealedBytes()) == v.seed)
                #expect(try HDNode(seed: seed).extendedPrivateKey() == v.xprv)
            }
        }

        @Test("Generated mnemonics have the asked word count and parse back (property)")
        func generate() throws {
            for count in Mnemonic.validWordCounts {
                for _ in 0..<20 {
                    let m = try Mnemonic.generate(wordCount: count)
                    #expect(m.words.count == count)
                    let again = try Mnemonic(phrase: m.phrase)
                    #expect(again.entropy == m.entropy)
                }
            }
            #expect(throws: MnemonicError.wordCount(13)) { try Mnemonic.generate(wordCount: 13) }
        }

        @Test("Normalization: NFKD, case and spacing do not change the result")
        func normalization() throws {
            let phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
            let messy = "  ABANDON\tabandon\u{3000}abandon abandon abandon abandon abandon abandon abandon abandon abandon ａｂｏｕｔ \n"
            #expect(try Mnemonic(phrase: messy).phrase == phrase)
            let composed = try Mnemonic(phrase: phrase).seed(passphrase: "caf\u{e9}")
            let decomposed = try Mnemonic(phrase: phrase).seed(passphrase: "cafe\u{301}")
            #expect(composed == decomposed)
            #expect(composed != (try Mnemonic(phrase: phrase).seed(passphrase: "cafe")))
        }

        @Test("Bad phrases name the position and the kind of problem, never the word")
        func badPhrases() throws {
            let good = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
            #expect(throws: MnemonicError.checksum) { try Mnemonic(phrase: good.replacingOccurrences(of: "about", with: "abandon")) }
            #expect(throws: MnemonicError.unknownWord(position: 3, nonASCII: false)) {
                try Mnemonic(phrase: good.replacingOccurrences(of: "abandon abandon abandon", with: "abandon abandon abandonn"))
            }
            // Accented input: NFKD keeps the combining accent; the error says so without showing the word.
            let accented = "abandon abando\u{301}n abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
            #expect(throws: MnemonicError.unknownWord(position: 2, nonASCII: true)) { try Mnemonic(phrase: accented) }
            #expect(MnemonicError.unknownWord(position: 2, nonASCII: true).description.contains("non-ASCII"))
            #expect(MnemonicError.unknownWord(position: 2, nonASCII: true).description.contains("word 2"))
            #expect(throws: MnemonicError.wordCount(11)) { try Mnemonic(phrase: "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about") }
            #expect(throws: MnemonicError.wordCount(0)) { try Mnemonic(phrase: "   ") }
            #expect(throws: MnemonicError.entropyLength(15)) { try Mnemonic(entropy: [UInt8](repeating: 0, count: 15)) }
            #expect(MnemonicError.checksum.description.contains("checksum"))
        }

        /// Every substring of length >= 3 of every word, lower-cased (errors must contain none of them).
        static func fragments(of phrase: String) -> Set<String> {
            var out = Set<String>()
            for word in phrase.lowercased().split(whereSeparator: { $0.isWhitespace }) {
                let chars = Array(word)
                guard chars.count >= 3 else { out.insert(String(chars)); continue }
                for length in 3...chars.count {
                    for start in 0...(chars.count - length) { out.insert(String(chars[start..<start + length])) }
                }
            }
            return out
        }

        /// All the text mnemonic errors can show for any phrase: their values hold numbers and flags only.
        static let fixedWording: String = {
            var all: [MnemonicError] = [.checksum, .tooLong(100_000, limit: InputLimit.mnemonic)] + (0...64).map { .wordCount($0) } + (16...32).map { .entropyLength($0) }
            for position in 1...64 { all += [.unknownWord(position: position, nonASCII: false), .unknownWord(position: position, nonASCII: true)] }
            return all.map(\.description).joined(separator: "\n").lowercased()
        }()

        @Test("Mnemonic errors contain no word of the phrase, nor any 3-letter piece of one, nor a suggestion")
        func errorsLeakNothing() throws {
            let words = "legal winner thank year wave sausage worth useful legal winner thank"
            let phrases = [
                words + " abouts",                  // one letter too many, near "about"
                words + " ABOUTS",                  // upper case
                words + " ab",                      // two letters
                words + " zz",
                "ab " + words,                      // unknown word first
                words + " yellox",                  // near a real word: a suggestion would reveal it
                words + " sausag\u{e9}",            // non-ASCII
                words + " legal",                   // checksum
                words,                              // wrong count
                words + " yellow " + words,         // wrong count, longer
            ]
            for phrase in phrases {
                do {
                    _ = try Mnemonic(phrase: phrase)
                    Issue.record("accepted a bad phrase")
                } catch {
                    let message = String(describing: error).lowercased()
                    // A piece leaks when the message has it and the fixed wording of every possible mnemonic
                    // message does not ("wor" of "worth" is also in "word 12", which is no leak).
                    let leaked = Self.fragments(of: phrase.decomposedStringWithCompatibilityMapping)
                        .filter { message.contains($0) && !Self.fixedWording.contains($0) }
                    #expect(leaked.isEmpty, "error \"\(message)\" contains \(leaked.sorted())")
                    for suggestion in ["about", "yellow", "sausage"] where !phrase.contains(suggestion) {
                        #expect(!message.contains(suggestion))
                    }
                    #expect(message.contains("mnemonic"))
                }
            }
        }

        @Test("Mnemonic descriptions never show the words")
        func redaction() throws {
            let m = try Mnemonic(phrase: "legal winner thank year wave sausage worth useful legal winner thank yellow")
            #expect(!m.description.contains("legal"))
            #expect(!String(reflecting: m).contains("legal"))
        }
    }
}
