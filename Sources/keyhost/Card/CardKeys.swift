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
            + " KEYHOST_PASSPHRASE is used when set, as by every command that takes a mnemonic; --no-passphrase loads the"
            + " wallet without one even then. A card that holds a key keeps it unless --replace. JSON: {key_uid}."
            + "\n" + HelpExamples.text(
                "KEYHOST_MNEMONIC=\"$(cat words.txt)\" keyhost card load-seed --reader virtual --card-state c.json",
                "keyhost card load-seed --passphrase --reader 0   # KEYHOST_PASSPHRASE, else a prompt")
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Add a BIP39 passphrase (from KEYHOST_PASSPHRASE, else a prompt).")
    var passphrase = false

    @Flag(help: "Load the seed without a BIP39 passphrase, even when KEYHOST_PASSPHRASE is set.")
    var noPassphrase = false

    @Flag(help: "Replace the key the card holds (it is gone for good unless you have its backup).")
    var replace = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if passphrase && noPassphrase { throw ValidationError("--passphrase and --no-passphrase exclude each other") }
    }

    func run() throws {
        let variable = MnemonicOptions.defaultPassphraseVariable
        let withPassphrase = passphrase || (!noPassphrase && SecretEnvironment.value(variable) != nil)
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { result in
            ["loaded the seed (key UID \(result.text("key_uid")))"]
        }) { try $0.loadSeed(passphrase: withPassphrase, replace: replace) }
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
        abstract: "GENERATE MNEMONIC: words from the card's random generator (--load: and load them). PRINTS THE WORDS: that is its purpose.",
        discussion: secretsHelp(["KEYHOST_PIN (with --load)", "KEYHOST_PASSPHRASE (with --passphrase)", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " Without --load the card keeps nothing: write the words down, then load them with keyhost card load-seed (KEYHOST_MNEMONIC)."
            + " --load does both in one step: the seed of the words (and of the passphrase, with --passphrase) becomes the card's key,"
            + " and the words, printed once, are its backup; a passphrase prompt asks twice, since a new passphrase mistyped would"
            + " make a wallet nobody can restore. A card that holds a key keeps it unless --replace."
            + " JSON: {mnemonic, indexes} (word indexes, 0-based); with --load {mnemonic, indexes, key_uid}."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("Number of words: 12, 15, 18, 21 or 24.", valueName: "n"))
    var words = 12

    @Flag(help: "Load the words' BIP39 seed as the card's key (PIN needed).")
    var load = false

    @Flag(help: "With --load: add a BIP39 passphrase (from KEYHOST_PASSPHRASE or a prompt).")
    var passphrase = false

    @Flag(help: "With --load: replace the key the card holds (it is gone for good unless you have its backup).")
    var replace = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard Mnemonic.validWordCounts.contains(words) else { throw ValidationError("--words must be 12, 15, 18, 21 or 24, not \(words)") }
        if !load && (passphrase || replace) { throw ValidationError("--\(passphrase ? "passphrase" : "replace") goes with --load") }
    }

    func run() throws {
        guard load else {
            try runCardCommand(card, json: json, access: .secureChannel, requirement: .initialized, human: { result in
                [result.text("mnemonic")]
            }) { try $0.generateMnemonic(words: words) }
            return
        }
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            OutputFile.note("loaded the seed of these words as the card's key (key UID \(result.text("key_uid"))); they are its only backup: write them down")
            return [result.text("mnemonic")]
        }) { connection in
            try connection.checkSeedLoad(passphrase: passphrase, replace: replace)
            try connection.open(.pinVerified)
            return try connection.generateMnemonicAndLoad(words: words, passphrase: passphrase)
        }
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
        abstract: "EXPORT KEY: the public key at --path; with --extended also the chain code and the extended public key; --private its private key (EIP-1581 paths only).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " JSON: {path, public_key, chain_code, xpub} (null unless --extended)."
            + " --private: a Keycard gives out private keys on EIP-1581 paths only (m/43'/60'/1581'/…, at least two levels"
            + " below, e.g. m/43'/60'/1581'/0'/0: keys meant for use off the card, such as a wallet's database encryption key);"
            + " other paths are refused before the card is asked. The private key goes to standard output only (hex), or with"
            + " -o FILE into a new file (mode 0600, never over an existing one), and never into an error or a note."
            + " JSON with --private: {path, public_key, chain_code, xpub, private_key, file} (private_key null when written to FILE)."
            + "\n" + HelpExamples.text(
                "keyhost card export-key --path \"m/44'/60'/0'/0/0\" --reader virtual --card-state c.json",
                "keyhost card export-key --path \"m/84'/0'/0'\" --extended --family zpub --reader virtual --card-state c.json --json")
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The key's path from the master key, e.g. m/44'/60'/0'/0/0.", valueName: "path"))
    var path: String

    @Flag(help: "Export the extended public key (chain code and xpub).")
    var extended = false

    @Option(help: ArgumentHelp("With --extended: the extended key's prefix, xpub (default), ypub, zpub, tpub, …", valueName: "family"))
    var family: String?

    @Flag(help: "Export the private key (EIP-1581 paths only): a secret, printed on standard output or written with -o.")
    var `private` = false

    @Option(name: .shortAndLong, help: ArgumentHelp("With --private: write the private key (hex) to this new file instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        let keyPath = try absoluteKeyPath(path)
        _ = try keyFamily()
        if family != nil && !extended { throw ValidationError("--family goes with --extended") }
        if output != nil && !`private` { throw ValidationError("-o goes with --private (public keys go to standard output)") }
        if `private` {
            if extended { throw ValidationError("--private and --extended exclude each other (the card gives no chain code on EIP-1581 paths)") }
            do { try CardConnection.checkPrivateExport(keyPath) } catch let error as CardServiceError { throw ValidationError(error.text) }
        }
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
        if `private` {
            try runCardCommand(card, json: json, access: .pinVerified, requirement: .masterKey, human: { result in
                if let output {
                    OutputFile.note("private key of \(result.text("path")) into \(output)")
                    return []
                }
                return [result.text("private_key")]
            }) { connection in
                let result = try connection.exportPrivateKey(path: keyPath)
                guard case .object(var fields) = result, case .bytes(var key)? = result["private_key"] else { return result }
                defer { zero(&key) }
                if let output {
                    var text = Array((Hex.encode(key) + "\n").utf8)
                    defer { zero(&text) }
                    try OutputFile.create(output, text)
                    fields = fields.map { $0.0 == "private_key" ? ($0.0, Record.null) : $0 }
                }
                fields.append(("file", .string(output)))
                return .object(fields)
            }
            return
        }
        let version = try keyFamily()
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .masterKey, human: { result in
            var lines = ["\(result.text("path")): \(result.text("public_key"))"]
            if extended { lines.append(result.text("xpub")) }
            return lines
        }) { try $0.exportKey(path: keyPath, extended: extended, family: version) }
    }
}
