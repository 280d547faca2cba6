import ArgumentParser
import KeyhostServices
import KeyhostBitcoin
import KeyhostBitcoinCard
import KeyhostCrypto

/// Where signing keys come from for `keyhost psbt`: a mnemonic in the environment or a Keycard.
struct PSBTKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the BIP39 mnemonic from environment variable VAR (default KEYHOST_MNEMONIC when it is set and --card is not given).", valueName: "var"))
    var mnemonicEnv: String?

    @Option(help: ArgumentHelp("With --mnemonic-env: read the BIP39 passphrase from environment variable VAR.", valueName: "var"))
    var passphraseEnv: String?

    @Flag(help: "Use a Keycard (PIN from KEYHOST_PIN, pairing password from KEYHOST_PAIRING_PASSWORD, else prompts).")
    var card = false

    @OptionGroup var cardOptions: TokenCardOptions

    // Secrets never come from argv (shell history, ps): these exist only to refuse them with the fix.
    @Option(help: .hidden) var mnemonic: String?
    @Option(help: .hidden) var pin: String?

    /// --mnemonic-env's variable, or KEYHOST_MNEMONIC by default.
    var mnemonicVariable: String? { SecretEnvironment.mnemonicVariable(mnemonicEnv, otherSource: usesCard) }

    /// --card, or --reader / --card-state, which imply it.
    var usesCard: Bool { card || cardOptions.selectsCard }

    var given: Bool { usesCard || mnemonicVariable != nil }

    func validate() throws {
        if mnemonic != nil {
            throw ValidationError("a mnemonic is never taken on the command line (shell history, ps); export it and name the variable: --mnemonic-env VAR")
        }
        if pin != nil { throw ValidationError("a PIN is never taken on the command line; set KEYHOST_PIN or type it at the prompt") }
        try SecretArguments.refuse([("--mnemonic-env", mnemonicEnv), ("--passphrase-env", passphraseEnv)])
        if usesCard && mnemonicEnv != nil { throw ValidationError("give one key source: --card or --mnemonic-env VAR, not both") }
        if passphraseEnv != nil && mnemonicVariable == nil { throw ValidationError("--passphrase-env goes with --mnemonic-env") }
        try cardOptions.requireCard(usesCard)
        try cardOptions.validate()
    }

    /// The key source, opened (mnemonic read and checked, card PIN verified); `close` releases it.
    func open() throws -> (source: PSBTKeySource, connection: CardConnection?)? {
        if let mnemonicVariable {
            let (phrase, origin) = try SecretEnvironment.mnemonic(variable: mnemonicVariable, alternatives: "; or use --card")
            let words = try SecretEnvironment.parse(phrase, origin: origin)
            let passphrase = try SecretEnvironment.passphrase(variable: passphraseEnv)
            return (try HDKeySource(master: HDNode(seed: words.seed(passphrase: passphrase.text))), nil)
        }
        guard usesCard else { return nil }
        let connection = try cardOptions.connect()
        do {
            return (try PSBTCardKeySource(card: connection.card), connection)
        } catch {
            connection.close()
            throw error
        }
    }
}
