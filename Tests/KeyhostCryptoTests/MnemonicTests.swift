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

        @Test("Bad phrases name the word, its position or the checksum")
        func badPhrases() throws {
            let good = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
            #expect(throws: MnemonicError.checksum) { try Mnemonic(phrase: good.replacingOccurrences(of: "about", with: "abandon")) }
            #expect(throws: MnemonicError.unknownWord(word: "abandonn", position: 3, suggestion: "abandon")) {
                try Mnemonic(phrase: good.replacingOccurrences(of: "abandon abandon abandon", with: "abandon abandon abandonn"))
            }
            // Non-normalized or accented input: NFKD keeps the combining accent, so the word is reported, not mangled.
            let accented = "abandon abando\u{301}n abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
            do {
                _ = try Mnemonic(phrase: accented)
                Issue.record("accented word accepted")
            } catch let error as MnemonicError {
                guard case .unknownWord(let word, let position, _) = error else { Issue.record("wrong error \(error)"); return }
                #expect(position == 2)
                #expect(word == "abando\u{301}n")
                #expect(error.description.contains("non-ASCII"))
                #expect(error.description.contains("word 2"))
            }
            #expect(throws: MnemonicError.wordCount(11)) { try Mnemonic(phrase: "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about") }
            #expect(throws: MnemonicError.wordCount(0)) { try Mnemonic(phrase: "   ") }
            #expect(throws: MnemonicError.entropyLength(15)) { try Mnemonic(entropy: [UInt8](repeating: 0, count: 15)) }
            #expect(MnemonicError.checksum.description.contains("checksum"))
        }

        @Test("Mnemonic descriptions never show the words")
        func redaction() throws {
            let m = try Mnemonic(phrase: "legal winner thank year wave sausage worth useful legal winner thank yellow")
            #expect(!m.description.contains("legal"))
            #expect(!String(reflecting: m).contains("legal"))
        }
    }
}
