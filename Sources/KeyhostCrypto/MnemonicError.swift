/// A BIP39 mnemonic that is not valid.
public enum MnemonicError: Error, Equatable, CustomStringConvertible {
    /// The phrase has a word count other than 12, 15, 18, 21 or 24.
    case wordCount(Int)
    /// A word that is not in the English wordlist, with its 1-based position and a suggestion when one is clear.
    case unknownWord(word: String, position: Int, suggestion: String?)
    /// All words are valid but the checksum in the last word does not match.
    case checksum
    /// Entropy of a length other than 16, 20, 24, 28 or 32 bytes.
    case entropyLength(Int)

    public var description: String {
        switch self {
        case .wordCount(let n):
            return "invalid mnemonic: \(n) words; BIP39 phrases have 12, 15, 18, 21 or 24 words"
        case .unknownWord(let word, let position, let suggestion):
            var text = "invalid mnemonic: word \(position) (\"\(word)\") is not in the BIP39 English wordlist"
            if word.unicodeScalars.contains(where: { !$0.isASCII }) {
                text += "; it contains accents or other non-ASCII characters, English words are plain a-z"
            }
            if let suggestion { text += "; did you mean \"\(suggestion)\"?" }
            return text
        case .checksum:
            return "invalid mnemonic: the checksum does not match; a word is wrong or out of order (every word is in the wordlist)"
        case .entropyLength(let n):
            return "invalid entropy: \(n) bytes; BIP39 uses 16, 20, 24, 28 or 32 bytes (12 to 24 words)"
        }
    }
}
