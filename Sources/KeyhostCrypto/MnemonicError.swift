/// A BIP39 mnemonic that is not valid.
public enum MnemonicError: Error, Equatable, CustomStringConvertible {
    /// The phrase has a word count other than 12, 15, 18, 21 or 24.
    case wordCount(Int)
    /// A word that is not in the English wordlist, at its 1-based position. The word itself is never kept:
    /// it is part of a secret, and so would be any suggestion of what it nearly was.
    case unknownWord(position: Int, nonASCII: Bool)
    /// All words are valid but the checksum in the last word does not match.
    case checksum
    /// Entropy of a length other than 16, 20, 24, 28 or 32 bytes.
    case entropyLength(Int)
    /// A phrase over the size limit, in UTF-8 bytes; checked before anything else.
    case tooLong(Int, limit: Int)

    public var description: String {
        switch self {
        case .wordCount(let n):
            return "invalid mnemonic: \(n) words; BIP39 phrases have 12, 15, 18, 21 or 24 words"
        case .unknownWord(let position, let nonASCII):
            var text = "invalid mnemonic: word \(position) is not in the BIP39 English wordlist"
            if nonASCII { text += " (it has accents or other non-ASCII letters; English words are plain a-z)" }
            return text + "; check that word's spelling against the list (each word is known by its first four letters)"
        case .checksum:
            return "invalid mnemonic: the checksum does not match; a word is wrong or out of order (every word is in the wordlist)"
        case .tooLong(let length, let limit):
            return "invalid mnemonic: \(length) bytes is over the \(limit)-byte limit for a phrase of at most 24 words; give only the words"
        case .entropyLength(let n):
            return "invalid entropy: \(n) bytes; BIP39 uses 16, 20, 24, 28 or 32 bytes (12 to 24 words)"
        }
    }
}
