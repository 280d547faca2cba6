
/// A BIP39 mnemonic (English wordlist). Only the entropy is stored, in wiped-on-release memory;
/// the words are looked up from it when asked for.
public struct Mnemonic: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 16 to 32 bytes of entropy the words encode.
    public let entropy: SecretBytes

    /// Word counts BIP39 defines.
    public static let validWordCounts = [12, 15, 18, 21, 24]

    /// The mnemonic for `entropy` (16, 20, 24, 28 or 32 bytes).
    public init(entropy: SecretBytes) throws {
        guard [16, 20, 24, 28, 32].contains(entropy.count) else { throw MnemonicError.entropyLength(entropy.count) }
        self.entropy = entropy
    }

    /// The mnemonic for raw entropy bytes.
    public init(entropy: [UInt8]) throws {
        try self.init(entropy: SecretBytes(entropy))
    }

    /// A new mnemonic of `wordCount` words from the system CSPRNG.
    public static func generate(wordCount: Int = 24) throws -> Mnemonic {
        guard validWordCounts.contains(wordCount) else { throw MnemonicError.wordCount(wordCount) }
        return try Mnemonic(entropy: SecretBytes(count: wordCount * 4 / 3) { fillRandom($0) })
    }

    /// Parses and checks a phrase: NFKD-normalized, case-insensitive, words separated by any whitespace.
    public init(phrase: String) throws {
        let length = phrase.utf8.count
        guard length <= InputLimit.mnemonic else { throw MnemonicError.tooLong(length, limit: InputLimit.mnemonic) }
        let normalized = NFKD.normalize(phrase).lowercased()
        let typed = normalized.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        guard Mnemonic.validWordCounts.contains(typed.count) else { throw MnemonicError.wordCount(typed.count) }
        var indices = [Int]()
        indices.reserveCapacity(typed.count)
        for (i, word) in typed.enumerated() {
            guard let index = Mnemonic.index(of: word) else {
                throw MnemonicError.unknownWord(position: i + 1, nonASCII: word.unicodeScalars.contains { !$0.isASCII })
            }
            indices.append(index)
        }
        defer { for i in indices.indices { indices[i] = 0 } }
        let entropyBytes = typed.count * 4 / 3
        var checksumOK = false
        let entropy = SecretBytes(count: entropyBytes) { out in
            withWipedScratch(33) { bits in
                // 11 bits per word, packed big-endian: entropy followed by entropyBits/32 checksum bits.
                for (i, index) in indices.enumerated() {
                    for bit in 0..<11 where index & (1 << (10 - bit)) != 0 {
                        let position = i * 11 + bit
                        bits[position / 8] |= UInt8(0x80 >> (position % 8))
                    }
                }
                out.copyMemory(from: UnsafeRawBufferPointer(rebasing: bits[0..<entropyBytes]))
                let checksumBits = entropyBytes / 4
                let expected = Mnemonic.checksumByte(UnsafeRawBufferPointer(out)) >> (8 - checksumBits)
                let found = UInt8((indices[indices.count - 1]) & ((1 << checksumBits) - 1))
                checksumOK = expected == found
            }
        }
        guard checksumOK else { throw MnemonicError.checksum }
        self.entropy = entropy
    }

    /// The words, in order. Treat them as secret.
    public var words: [String] {
        Mnemonic.wordIndices(entropy).map { BIP39English.words[$0] }
    }

    /// The words joined by single spaces. Treat it as secret.
    public var phrase: String { words.joined(separator: " ") }

    /// The 64-byte BIP39 seed: PBKDF2-HMAC-SHA512(NFKD(phrase), "mnemonic" + NFKD(passphrase), 2048).
    public func seed(passphrase: String = "") -> SecretBytes {
        var password = Array(phrase.utf8)
        defer { for i in password.indices { password[i] = 0 } }
        let salt = Array(NFKD.normalize("mnemonic" + passphrase).utf8)
        // Cannot throw: iterations and length are fixed and valid.
        return (try? KDF.pbkdf2SHA512(password: password, salt: salt, iterations: 2048, length: 64)) ?? SecretBytes([])
    }

    /// Index of `word` in the wordlist, or nil.
    public static func index(of word: String) -> Int? {
        let list = BIP39English.words
        var low = 0, high = list.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if list[mid] == word { return mid }
            if list[mid] < word { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }

    private static func wordIndices(_ entropy: SecretBytes) -> [Int] {
        entropy.withUnsafeBytes { bytes -> [Int] in
            let checksumBits = bytes.count / 4
            let checksum = checksumByte(bytes)
            let wordCount = (bytes.count * 8 + checksumBits) / 11
            func bit(_ position: Int) -> Int {
                let byte = position / 8 < bytes.count ? bytes[position / 8] : checksum
                return Int(byte >> (7 - position % 8)) & 1
            }
            return (0..<wordCount).map { w in (0..<11).reduce(0) { $0 << 1 | bit(w * 11 + $1) } }
        }
    }

    /// First byte of SHA-256(entropy), computed without copying the entropy into an unwiped array.
    private static func checksumByte(_ entropy: UnsafeRawBufferPointer) -> UInt8 {
        withWipedScratch(32) { digest in
            SHA256.hash(entropy, into: digest.baseAddress!)
            return digest[0]
        }
    }

    /// Never shows the words.
    public var description: String { "Mnemonic(\(entropy.count * 3 / 4) words, redacted)" }
    public var debugDescription: String { description }
}
