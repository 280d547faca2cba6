import KeyhostCrypto

/// A secret typed at the controlling terminal with echo off, for command-line commands that must not take
/// secrets from argv (`keyhost key` asks for a mnemonic this way). The same prompt the card's PIN uses.
public enum TerminalSecret {
    /// One line from the terminal (at most `capacity` bytes), or nil when there is no terminal to ask.
    /// Throws when the user typed nothing.
    public static func read(prompt: String, capacity: Int = 256) throws -> SecretBytes? {
        try SecretInput.prompt(prompt, maximumLength: capacity)
    }
}
