import ArgumentParser
import KeyhostCrypto

/// Refuses option values that look like a secret before any message can echo them: a mnemonic pasted into
/// --path or --mnemonic-env (which takes a variable's NAME) would otherwise come back in "invalid derivation
/// path \"abandon ability …\"" on the screen and in CI logs. Values are judged by content (SecretDetector, and
/// for `strict` options any run of two or more BIP39 words, which paths, coins, kinds and variable names never
/// have; a reader name may: "Smart Card" is two list words), never shown.
enum SecretArguments {
    static func refuse(_ values: [(option: String, value: String?)], strict: Bool = true) throws {
        for case let (option, value?) in values {
            guard let why = reason(value, strict: strict) else { continue }
            throw ValidationError("the value of \(option) looks like \(why), so it is not shown; secrets are never taken on the command line "
                + "(shell history, ps). A mnemonic goes in KEYHOST_MNEMONIC (or the variable --mnemonic-env names), a passphrase in "
                + "KEYHOST_PASSPHRASE (or the variable --passphrase-env names), a PIN in KEYHOST_PIN; if it was a real secret, consider it exposed")
        }
    }

    /// What `value` looks like, when it looks secret.
    static func reason(_ value: String, strict: Bool = true) -> String? {
        let words = value.split(whereSeparator: { $0.isWhitespace })
        if strict && words.count >= 2 && words.allSatisfy({ Mnemonic.index(of: $0.lowercased()) != nil }) { return "BIP39 mnemonic words" }
        let findings = SecretDetector.findings(in: value)
        if findings.contains(.mnemonicWords) { return "BIP39 mnemonic words" }
        if findings.contains(.extendedPrivateKey) { return "an extended PRIVATE key" }
        if findings.contains(.wif) { return "a WIF private key" }
        if findings.contains(.hexKey) { return "a private key, seed or entropy in hex" }
        return nil
    }
}

/// Positional arguments a command takes none of: named (the first one) unless they look secret.
enum StrayArguments {
    static func refuse(_ arguments: [String], command: String) throws {
        guard let first = arguments.first else { return }
        try SecretArguments.refuse([("the arguments", arguments.joined(separator: " "))])
        throw ValidationError("unexpected argument \"\(first.prefix(40))\": \(command) takes options only (see --help)")
    }
}
