import ArgumentParser
import KeyhostCrypto

/// Where `keyhost key` takes keys from: a mnemonic (environment or prompt), `--xpub`, or `--card`.
struct KeySourceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the BIP39 mnemonic from environment variable VAR (default KEYHOST_MNEMONIC; when that is unset, a prompt on the terminal that does not echo).", valueName: "var"))
    var mnemonicEnv: String?

    @Option(help: ArgumentHelp("Read the BIP39 passphrase from environment variable VAR (default: no passphrase).", valueName: "var"))
    var passphraseEnv: String?

    @Flag(help: "Type the BIP39 passphrase at a prompt on the terminal that does not echo.")
    var passphrasePrompt = false

    @Option(help: ArgumentHelp("An extended public key (xpub, ypub, zpub, tpub, upub, vpub, ...): public derivation only, and --path is relative to it.", valueName: "key"))
    var xpub: String?

    @Flag(help: "Use a Keycard's key (PIN from KEYHOST_PIN, pairing password from KEYHOST_PAIRING_PASSWORD, else prompts that do not echo).")
    var card = false

    /// --reader and --card-state, shared with the token commands that open a Keycard the same way.
    @OptionGroup var cardOptions: TokenCardOptions

    // Secrets never come from argv (shell history, ps): these exist only to refuse them with the fix.
    @Option(help: .hidden) var mnemonic: String?
    @Option(help: .hidden) var passphrase: String?
    @Option(help: .hidden) var pin: String?
    @Option(help: .hidden) var seed: String?
    @Option(name: .customLong("private-key"), help: .hidden) var privateKey: String?

    /// Which source the options pick.
    enum Kind { case mnemonic, xpub, card }

    var kind: Kind { xpub != nil ? .xpub : usesCard ? .card : .mnemonic }

    /// --card, or --reader / --card-state, which imply it.
    var usesCard: Bool { card || cardOptions.selectsCard }

    func validate() throws {
        try SecretArguments.refuse([("--mnemonic-env", mnemonicEnv), ("--passphrase-env", passphraseEnv)])
        try SecretArguments.refuse([("--reader", cardOptions.reader), ("--card-state", cardOptions.cardState)], strict: false)
        if mnemonic != nil {
            throw ValidationError("a mnemonic is never taken on the command line (shell history, ps); "
                + "export it as KEYHOST_MNEMONIC, or name another variable with --mnemonic-env VAR, or type it at the prompt")
        }
        if passphrase != nil {
            throw ValidationError("a BIP39 passphrase is never taken on the command line; put it in an environment variable and pass its name: --passphrase-env VAR")
        }
        if pin != nil { throw ValidationError("a PIN is never taken on the command line; set KEYHOST_PIN or type it at the prompt") }
        if seed != nil || privateKey != nil {
            throw ValidationError("seeds and private keys are never taken on the command line; use the mnemonic (KEYHOST_MNEMONIC or --mnemonic-env VAR) or --card")
        }
        let sources = [xpub.map { _ in "--xpub" }, usesCard ? "--card" : nil, mnemonicEnv.map { _ in "--mnemonic-env" }].compactMap { $0 }
        if sources.count > 1 { throw ValidationError("\(sources.joined(separator: " and ")) exclude each other; give one key source") }
        if passphraseEnv != nil && passphrasePrompt { throw ValidationError("--passphrase-env and --passphrase-prompt exclude each other") }
        if passphrasePrompt && kind != .mnemonic { throw ValidationError("--passphrase-prompt goes with a mnemonic, not with \(sources[0])") }
        if passphraseEnv != nil && kind != .mnemonic { throw ValidationError("--passphrase-env goes with a mnemonic, not with \(sources[0])") }
        try cardOptions.requireCard(usesCard)
        try cardOptions.validate()
        _ = try parsedXpub()
    }

    /// The parsed --xpub; a private key or a malformed one is a usage error. Commands call this from their own
    /// validate(), which may run before this group's, so the checks live here.
    func parsedXpub() throws -> (node: HDNode, family: ExtendedKeyVersion)? {
        guard let xpub else { return nil }
        // Judged by the decoded version bytes, never by the prefix text (Ltpv, dgpv are private too).
        if HDNode.isExtendedPrivateKey(xpub) == true {
            throw ValidationError("--xpub was given an extended PRIVATE key; it is a secret and must not be on the command line. "
                + "Give the extended public key, or the mnemonic (KEYHOST_MNEMONIC or --mnemonic-env VAR)")
        }
        try SecretArguments.refuse([("--xpub", xpub)])
        let parsed: (node: HDNode, family: ExtendedKeyVersion)
        do { parsed = try HDNode.parse(xpub.trimmingWhitespaceAndNewlines()) } catch { throw ValidationError("--xpub: \(error)") }
        guard !parsed.node.isPrivate else { throw ValidationError("--xpub was given an extended PRIVATE key; give the extended public key") }
        return parsed
    }
}
