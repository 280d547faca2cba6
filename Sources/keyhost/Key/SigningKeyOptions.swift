import ArgumentParser
import KeyhostCrypto
import KeyhostServices

/// The key sources that can sign: a mnemonic (as `MnemonicOptions` reads it) or a Keycard (`--card`, with the card
/// options every command that opens a card takes). `key`, `psbt` and `eth` put this one group on their commands,
/// so each takes the same spellings and reads its secrets the same way (`KeySourceOptions` adds `--xpub` for `key`).
struct SigningKeyOptions: ParsableArguments {
    @OptionGroup var secrets: MnemonicOptions

    @Flag(help: "Use a Keycard's key (PIN from KEYHOST_PIN, pairing password from KEYHOST_PAIRING_PASSWORD, else prompts that do not echo).")
    var card = false

    /// --reader, --card-state, --trusted-ca, --pin-env, --pairing-password-env, as every command that opens a card takes them.
    @OptionGroup var cardOptions: CardOptions

    /// --card, or --reader / --card-state, which imply it.
    var usesCard: Bool { card || cardOptions.selectsCard }

    func validate() throws {
        try SecretArguments.refuse([("--reader", cardOptions.reader), ("--card-state", cardOptions.cardState)], strict: false)
        if usesCard { try secrets.refuse(with: "--card") }
        try cardOptions.requireCard(usesCard)
        try cardOptions.validate()
    }

    /// A key named on the command line or in the environment: --card (or what implies it), --mnemonic-env, or KEYHOST_MNEMONIC set.
    var given: Bool { usesCard || secrets.mnemonicGiven }

    /// The opened key: the mnemonic's master node (read from the variable, else asked on the terminal), or the card
    /// with its PIN verified. `alternatives` ends the message when there is neither ("; or use --card").
    func open(alternatives: String = "; or use --card") throws -> SigningKey {
        if usesCard { return .card(try cardOptions.openSigner()) }
        return .seed(try secrets.master(alternatives: alternatives))
    }
}

/// A key that signs: a seed's master node, or a card ready to sign, of any family (`close` ends its session).
enum SigningKey {
    case seed(HDNode)
    case card(SigningCard)

    func close() {
        if case .card(let connection) = self { connection.close() }
    }
}
