extension Mnemonic {
    /// Wordlist words close to the word at 1-based `position` of `phrase` (normalised as `init(phrase:)` does),
    /// best first: the word its first four letters name (BIP39 words are unique in four), then words within two
    /// edits. Empty when the position is out of range or nothing is close.
    ///
    /// The result points at a word of the secret phrase: show it only to the phrase's owner, on request
    /// (`keyhost key mnemonic check --suggest`); errors never carry it.
    public static func suggestions(forWordAt position: Int, in phrase: String, limit: Int = 3) -> [String] {
        guard phrase.utf8.count <= InputLimit.mnemonic else { return [] }
        let typed = NFKD.normalize(phrase).lowercased().split(whereSeparator: { $0.isWhitespace })
        guard position >= 1, position <= typed.count, limit > 0 else { return [] }
        let word = Array(typed[position - 1].unicodeScalars)
        // Nothing in the list is longer than 8 letters; a far longer "word" has no close match worth the work.
        guard word.count <= 16 else { return [] }
        var found: [String] = []
        if word.count >= 4 {
            let prefix = String(String.UnicodeScalarView(word.prefix(4)))
            if let match = BIP39English.words.first(where: { $0.hasPrefix(prefix) }) { found.append(match) }
        }
        var near: [(distance: Int, word: String)] = []
        for candidate in BIP39English.words where !found.contains(candidate) {
            let distance = editDistance(word, Array(candidate.unicodeScalars), cap: 2)
            if distance <= 2 { near.append((distance, candidate)) }
        }
        near.sort { $0.distance != $1.distance ? $0.distance < $1.distance : $0.word < $1.word }
        found += near.map(\.word)
        return Array(found.prefix(limit))
    }

    /// Levenshtein distance, or cap + 1 as soon as it is certainly above `cap`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], cap: Int) -> Int {
        if abs(a.count - b.count) > cap { return cap + 1 }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > cap { return cap + 1 }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
