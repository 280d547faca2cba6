/// Finds what looks like a secret in a piece of Lua source, by content and by name. The REPL uses it to keep
/// such statements out of its history file.
///
/// It errs on the side of caution: a statement it flags is merely not saved, while one it misses leaves a key
/// on disk. Content, not prefix text, decides: Base58 strings are decoded and judged by their shape (an extended
/// key with private key data, of any version; a WIF or BIP38 key), whether or not the checksum matches, so a
/// mistyped key is kept out too.
public enum SecretDetector {
    /// Why a statement counts as secret.
    public enum Finding: String, Sendable, CaseIterable {
        /// A run of BIP39 English words (a mnemonic or part of one).
        case mnemonicWords
        /// A Base58 extended private key (xprv, zprv, Ltpv, dgpv, … any version whose key data starts with 00).
        case extendedPrivateKey
        /// A WIF private key (33-byte payload, or 34 ending in 01) or a BIP38 encrypted key.
        case wif
        /// 16, 24, 28, 32 or 64 bytes of hex: a private key, chain code, entropy or seed.
        case hexKey
        /// A string literal of 4–8 or 12 digits, the shape of a PIN or PUK.
        case pinLike
        /// A name that suggests a secret (pin, password, mnemonic, seed, …).
        case secretName
    }

    /// Substrings of the lower-cased statement that suggest a secret.
    public static let secretNames = ["pin", "puk", "password", "passphrase", "mnemonic", "seed", "phrase", "words", "entropy",
                                     "prv", "wif", "private", "privkey", "secret"]

    /// Consecutive BIP39 words inside string literals and comments that count as a mnemonic. Three words are
    /// 33 bits of a phrase; prose inside strings rarely has three list words in a row (0.6% of the lines of
    /// keyhost's own Lua, mostly test descriptions).
    public static let wordsInLiterals = 3
    /// Consecutive BIP39 words anywhere (a phrase pasted without quotes). Higher, because Lua code itself is
    /// made of list words (`local`, `end`, `return`, `true`, `print`, `table`, `address`).
    public static let wordsAnywhere = 5

    /// Hex lengths (digits) that are secret-sized: BIP39 entropy (16, 24, 28 bytes), a private key or chain code
    /// (32), a BIP39 seed (64). 20 bytes (40 digits) is left out: that is an address or a HASH160.
    static let secretHexLengths: Set<Int> = [32, 48, 56, 64, 128]

    /// Content checks look at this many bytes at most (names are looked for everywhere): a pasted megabyte
    /// need not be scanned word by word.
    static let maximumScannedLength = 100_000

    /// Every reason `statement` looks secret; empty when it looks safe to keep.
    public static func findings(in statement: String) -> Set<Finding> {
        var found = Set<Finding>()
        let lower = statement.lowercased()
        if secretNames.contains(where: { lower.contains($0) }) { found.insert(.secretName) }
        let text = Array(statement.utf8.prefix(maximumScannedLength))
        let pieces = LuaLiterals.split(text)
        if hasWordRun(pieces, minimum: wordsInLiterals)
            || longestWordRun(text) >= wordsAnywhere {
            found.insert(.mnemonicWords)
        }
        for token in tokens(text) {
            if let finding = judge(token) { found.insert(finding) }
        }
        for piece in pieces where piece.isString {
            let count = piece.text.count
            if (4...8).contains(count) || count == 12, piece.text.allSatisfy({ (0x30...0x39).contains($0) }) {
                found.insert(.pinLike)
            }
        }
        return found
    }

    /// Whether `statement` looks like it holds a secret.
    public static func containsSecret(_ statement: String) -> Bool {
        !findings(in: statement).isEmpty
    }

    // MARK: - Tokens

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }

    /// Maximal runs of ASCII letters and digits.
    static func tokens(_ text: [UInt8]) -> [ArraySlice<UInt8>] {
        var out: [ArraySlice<UInt8>] = []
        var start: Int?
        for i in 0...text.count {
            if i < text.count && isAlphanumeric(text[i]) {
                if start == nil { start = i }
            } else if let s = start {
                out.append(text[s..<i])
                start = nil
            }
        }
        return out
    }

    private static func judge(_ token: ArraySlice<UInt8>) -> Finding? {
        var hexDigits = token
        if hexDigits.count > 2, hexDigits.first == 0x30, hexDigits[hexDigits.startIndex + 1] | 0x20 == 0x78 { hexDigits = hexDigits.dropFirst(2) }
        if secretHexLengths.contains(hexDigits.count) && hexDigits.allSatisfy(isHex) { return .hexKey }
        // WIF is 51–52 characters, BIP38 58, an extended key 111–112.
        guard (50...116).contains(token.count), let raw = try? Base58.decode(String(decoding: token, as: UTF8.self)) else { return nil }
        switch raw.count {
        case 37, 38:  // version ‖ 32-byte key [‖ 01] ‖ checksum
            return raw.count == 37 || raw[33] == 0x01 ? .wif : nil
        case 43:  // BIP38: 01 42|43 ‖ flags ‖ … ‖ checksum
            return raw[0] == 0x01 && (raw[1] == 0x42 || raw[1] == 0x43) ? .wif : nil
        case 82:  // version (4) ‖ depth ‖ fingerprint (4) ‖ child (4) ‖ chain code (32) ‖ key data (33) ‖ checksum
            let version = raw[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let privateVersion = ExtendedKeyVersion.lookup(version: version)?.isPrivate == true
            return raw[45] == 0x00 || privateVersion ? .extendedPrivateKey : nil
        default:
            return nil
        }
    }

    // MARK: - BIP39 word runs

    private static let wordSet = Set(BIP39English.words.map { Array($0.utf8) })

    private static func isLetter(_ c: UInt8) -> Bool { (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) }

    /// The longest run of list words in `text` separated only by spaces, tabs, newlines, commas or quotes.
    static func longestWordRun(_ text: [UInt8]) -> Int {
        var best = 0, current = 0, i = 0
        while i < text.count {
            if isLetter(text[i]) {
                var j = i
                var word: [UInt8] = []
                while j < text.count && isLetter(text[j]) { word.append(text[j] | 0x20); j += 1 }
                current = wordSet.contains(word) ? current + 1 : 0
                best = max(best, current)
                i = j
            } else {
                if !" \t\r\n,\"'".utf8.contains(text[i]) { current = 0 }
                i += 1
            }
        }
        return best
    }

    /// Whether the literals and comments, taken in order, hold `minimum` list words in a row. Code between two
    /// literals continues a run only when it is punctuation a word list is written with (`, ; { } ..`), so
    /// `{"abandon", "ability", "able"}` and `"abandon " .. "ability"` count as runs.
    private static func hasWordRun(_ pieces: [LuaLiterals.Piece], minimum: Int) -> Bool {
        var stream: [UInt8] = []
        for piece in pieces {
            if piece.isLiteral {
                stream += [0x20] + piece.text + [0x20]
            } else if !piece.text.allSatisfy({ " \t\r\n,;{}.()".utf8.contains($0) }) {
                stream.append(0x7C)  // '|' ends a run
            }
        }
        return longestWordRun(stream) >= minimum
    }
}
