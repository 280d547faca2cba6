import KeyhostCrypto

/// Judges an index file's entries with the crypto module's address decoders, so a mistyped address, another
/// network's address or a stray line stops the scan instead of silently never matching (which would end the
/// gap early and report "0 used").
enum IndexEntryCheck {
    /// How much of a bad entry an error shows: enough to find the line, too little to leak a secret pasted there.
    static let shownPrefix = 20

    /// Why `entry` is not an address of `coin`, or nil when it is one.
    static func problem(_ entry: String, coin: Coin) -> String? {
        let error: Error
        do { _ = try Address.decode(entry, coin: coin); return nil } catch let caught { error = caught }
        if let other = Coin.all.first(where: { $0.symbol != coin.symbol && Address.isValid(entry, coin: $0) }) {
            return "\(shown(entry)) is \(article(other.name)) \(other.name) address, but the scan is for \(coin.name)"
        }
        // The decoder's reason names one character at most, never the whole string.
        return "\(shown(entry)) is not \(article(coin.name)) \(coin.name) address (\(error))"
    }

    /// A short, escaped prefix of `entry`; nothing of it when it looks like a key or a mnemonic.
    static func shown(_ entry: String) -> String {
        if SecretDetector.containsSecret(entry) { return "the entry (not shown: it looks like a secret)" }
        let head = entry.prefix(shownPrefix)
        return (String(head) + (head.count < entry.count ? "…" : "")).debugDescription
    }

    private static func article(_ name: String) -> String {
        "AEIOU".contains(name.first ?? "x") ? "an" : "a"
    }
}
