import ArgumentParser
import KeyhostCrypto
import KeyhostServices

/// The mnemonic and its BIP39 passphrase, spelled once for every command that takes a mnemonic (`key`, `psbt`, `eth`,
/// `discover`), so none can read one variable and silently skip the other. The one secret-input policy:
/// - the mnemonic: the variable --mnemonic-env names, else KEYHOST_MNEMONIC, else a prompt on the terminal;
/// - the passphrase: --no-passphrase for none, --passphrase-prompt, the variable --passphrase-env names, else
///   KEYHOST_PASSPHRASE when set (it was listed among the secrets but ignored: the wrong wallet, exit 0), else none.
struct MnemonicOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the BIP39 mnemonic from environment variable VAR (default KEYHOST_MNEMONIC; when that is unset, a prompt on the terminal that does not echo).", valueName: "var"))
    var mnemonicEnv: String?

    @Option(help: ArgumentHelp("Read the BIP39 passphrase from environment variable VAR (default KEYHOST_PASSPHRASE when it is set, else no passphrase).", valueName: "var"))
    var passphraseEnv: String?

    @Flag(help: "Type the BIP39 passphrase at a prompt on the terminal that does not echo.")
    var passphrasePrompt = false

    @Flag(help: "Use no BIP39 passphrase, even when KEYHOST_PASSPHRASE is set.")
    var noPassphrase = false

    // Secrets never come from argv (shell history, ps): these exist only to refuse them with the fix.
    @Option(help: .hidden) var mnemonic: String?
    @Option(help: .hidden) var passphrase: String?
    @Option(help: .hidden) var pin: String?
    @Option(help: .hidden) var seed: String?
    @Option(name: .customLong("private-key"), help: .hidden) var privateKey: String?

    static let defaultPassphraseVariable = "KEYHOST_PASSPHRASE"

    /// The passphrase options given, by name (for "goes with a mnemonic" messages).
    var passphraseOptions: [String] {
        [passphraseEnv.map { _ in "--passphrase-env" }, passphrasePrompt ? "--passphrase-prompt" : nil, noPassphrase ? "--no-passphrase" : nil]
            .compactMap { $0 }
    }

    func validate() throws {
        if mnemonic != nil {
            throw ValidationError("a mnemonic is never taken on the command line (shell history, ps); "
                + "export it as KEYHOST_MNEMONIC, or name another variable with --mnemonic-env VAR, or type it at the prompt")
        }
        if passphrase != nil {
            throw ValidationError("a BIP39 passphrase is never taken on the command line; export it as KEYHOST_PASSPHRASE, "
                + "or name another variable with --passphrase-env VAR, or type it at a prompt with --passphrase-prompt")
        }
        if pin != nil { throw ValidationError("a PIN is never taken on the command line; set KEYHOST_PIN or type it at the prompt") }
        if seed != nil || privateKey != nil {
            throw ValidationError("seeds and private keys are never taken on the command line; use the mnemonic (KEYHOST_MNEMONIC or --mnemonic-env VAR) or --card")
        }
        try SecretArguments.refuse([("--mnemonic-env", mnemonicEnv), ("--passphrase-env", passphraseEnv)])
        if passphraseOptions.count > 1 { throw ValidationError("\(passphraseOptions.joined(separator: " and ")) exclude each other; give one") }
    }

    /// Refuses mnemonic options next to `other`, the key source named instead (--xpub, --card, --descriptor).
    func refuse(with other: String) throws {
        if mnemonicEnv != nil { throw ValidationError("--mnemonic-env and \(other) exclude each other; give one key source") }
        if let given = passphraseOptions.first { throw ValidationError("\(given) goes with a mnemonic, not with \(other)") }
    }

    /// Whether a mnemonic is named: --mnemonic-env, or KEYHOST_MNEMONIC set (commands whose key is optional use it).
    var mnemonicGiven: Bool { SecretEnvironment.mnemonicVariable(mnemonicEnv, otherSource: false) != nil }

    /// The master node of the mnemonic and passphrase; `alternatives` ends the message when no mnemonic can be had
    /// ("; or use --card").
    func master(alternatives: String) throws -> HDNode { try HDNode(seed: seed(alternatives: alternatives)) }

    /// The BIP39 seed of the mnemonic (read, checked) and the passphrase.
    func seed(alternatives: String) throws -> SecretBytes {
        let (phrase, origin) = try SecretEnvironment.mnemonic(variable: mnemonicEnv, alternatives: alternatives)
        let words = try SecretEnvironment.parse(phrase, origin: origin)
        return words.seed(passphrase: try passphraseBytes().text)
    }

    /// The passphrase as the options and the environment say (empty for none).
    func passphraseBytes() throws -> SecretBytes {
        if noPassphrase { return SecretBytes([UInt8]()) }
        if passphrasePrompt || passphraseEnv != nil { return try SecretEnvironment.passphrase(variable: passphraseEnv, prompt: passphrasePrompt) }
        return SecretEnvironment.value(Self.defaultPassphraseVariable) ?? SecretBytes([UInt8]())
    }
}
