import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

struct CardLoadSeed: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load-seed",
        abstract: "LOAD KEY: put the BIP39 seed of a mnemonic (and optional passphrase) on the card.",
        discussion: secretsHelp(["KEYHOST_MNEMONIC", "KEYHOST_PASSPHRASE (with --passphrase)", "KEYHOST_PIN",
                                 "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " KEYHOST_PASSPHRASE set without --passphrase is refused, so a passphrase is never left out by mistake."
            + " A card that holds a key keeps it unless --replace. JSON: {key_uid}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Add a BIP39 passphrase (from KEYHOST_PASSPHRASE or a prompt).")
    var passphrase = false

    @Flag(help: "Replace the key the card holds (it is gone for good unless you have its backup).")
    var replace = false

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { result in
            ["loaded the seed (key UID \(result.text("key_uid")))"]
        }) { try $0.loadSeed(passphrase: passphrase, replace: replace) }
    }
}

struct CardGenerateKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-key",
        abstract: "GENERATE KEY: a new random master key made on the card (no backup of it exists).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " A card that holds a key keeps it unless --replace. JSON: {key_uid}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Replace the key the card holds (it is gone for good unless you have its backup).")
    var replace = false

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { result in
            ["generated a key on the card (key UID \(result.text("key_uid")))"]
        }) { try $0.generateKey(replace: replace) }
    }
}

struct CardGenerateMnemonic: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-mnemonic",
        abstract: "GENERATE MNEMONIC: words from the card's random generator. PRINTS THE WORDS: that is its purpose.",
        discussion: secretsHelp(["KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " The card keeps nothing: write the words down, then load them with keyhost card load-seed (KEYHOST_MNEMONIC)."
            + " JSON: {mnemonic, indexes} (word indexes, 0-based)."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("Number of words: 12, 15, 18, 21 or 24.", valueName: "n"))
    var words = 12

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard Mnemonic.validWordCounts.contains(words) else { throw ValidationError("--words must be 12, 15, 18, 21 or 24, not \(words)") }
    }

    func run() throws {
        try runCardCommand(card, json: json, access: .secureChannel, requirement: .initialized, human: { result in
            [result.text("mnemonic")]
        }) { try $0.generateMnemonic(words: words) }
    }
}

/// `--path m/…`: an absolute BIP32 path, checked at parse time (a bad one is a usage error).
func absoluteKeyPath(_ text: String) throws -> KeyPath {
    let path: KeyPath
    do { path = try KeyPath(text) } catch { throw ValidationError("--path \(text): \(error)") }
    guard path.source == .master else { throw ValidationError("--path must start at the master key: m/…, not \(text)") }
    return path
}

struct CardExportKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-key",
        abstract: "EXPORT KEY: the public key at --path; with --extended also the chain code and the extended public key.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " Private keys are never exported by this command. JSON: {path, public_key, chain_code, xpub} (null unless --extended)."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The key's path from the master key, e.g. m/44'/60'/0'/0/0.", valueName: "path"))
    var path: String

    @Flag(help: "Export the extended public key (chain code and xpub).")
    var extended = false

    @Option(help: ArgumentHelp("With --extended: the extended key's prefix, xpub (default), ypub, zpub, tpub, …", valueName: "family"))
    var family: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        _ = try absoluteKeyPath(path)
        _ = try keyFamily()
        if family != nil && !extended { throw ValidationError("--family goes with --extended") }
    }

    func keyFamily() throws -> ExtendedKeyVersion {
        guard let family else { return .xpub }
        guard let found = ExtendedKeyVersion.lookup(prefix: family), found.publicPrefix == family else {
            throw ValidationError("--family \(family) is not an extended public key prefix (xpub, ypub, zpub, tpub, …)")
        }
        return found
    }

    func run() throws {
        let keyPath = try absoluteKeyPath(path)
        let version = try keyFamily()
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .masterKey, human: { result in
            var lines = ["\(result.text("path")): \(result.text("public_key"))"]
            if extended { lines.append(result.text("xpub")) }
            return lines
        }) { try $0.exportKey(path: keyPath, extended: extended, family: version) }
    }
}
