import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord
import KeyhostServices

/// `keyhost card tapsigner …`: a TAPSIGNER's own commands (set-up, derivation, backup, CVC).
struct CardTapsigner: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tapsigner",
        abstract: "A Coinkite TAPSIGNER: status, setup, derive, xpub, backup, change-cvc.",
        discussion: """
            The CVC printed on the card comes from KEYHOST_CVC (or the variable --cvc-env names), else a prompt that does not \
            echo; never from the command line. After three wrong CVCs the card imposes a back-off: commands fail with its \
            seconds left (kind rate_limited), or wait it out with --wait-backoff. key, psbt and discover sign and export \
            keys with the TAPSIGNER through --card.
            """,
        subcommands: [TapsignerStatus.self, TapsignerSetup.self, TapsignerDerive.self, TapsignerXpub.self, TapsignerBackup.self,
                      TapsignerChangeCVC.self]
    )
}

struct TapsignerStatus: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The card's status (no CVC needed).",
                                                    discussion: "JSON: {product, version, card_ident, testnet, state, auth_delay, path, num_backups}.")
    @OptionGroup var card: CardOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .tapsigner, json: json, human: { [tapStatusLine($0), "path \($0.text("path")), backups made \($0.text("num_backups"))"] }) { session in
            TapCardRecords.status(try session.mapping("status") { try session.card.getStatus() })
        }
    }
}

struct TapsignerSetup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup", abstract: "Set up a blank TAPSIGNER: the card picks its master key, mixed with your entropy as the chain code.",
        discussion: "The card then derives to m/84'/0'/0'. Once only: a set-up TAPSIGNER keeps its key for good. JSON: the status after setup.")
    @OptionGroup var card: CardOptions
    @OptionGroup var entropy: TapEntropyOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .tapsigner, json: json, human: { ["set up: \(tapStatusLine($0)), path \($0.text("path"))"] }) { session in
            guard session.status?.path == nil else {
                throw Failure.kind("already_setup", "the TAPSIGNER in \(session.readerName) is set up already; a TAPSIGNER is set up once")
            }
            let cvc = try session.cvc()
            var chainCode = try entropy.bytes()
            defer { zero(&chainCode) }
            try session.mapping("new") { try session.card.setup(chainCode: chainCode, cvc: cvc) }
            return TapCardRecords.status(try session.mapping("status") { try session.card.getStatus() })
        }
    }
}

struct TapsignerDerive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive", abstract: "Set the card's derivation to PATH (hardened levels only, at most 8); the card proves the key.",
        discussion: "JSON: {path, public_key, chain_code, master_public_key, master_fingerprint}.")
    @OptionGroup var card: CardOptions
    @Argument(help: ArgumentHelp("The path, e.g. m/84'/0'/0' (or m/84h/0h/0h).", valueName: "path")) var path: String
    @Flag(help: "Print JSON.") var json = false

    func validate() throws { _ = try indexes() }

    func indexes() throws -> [UInt32] {
        guard let parsed = try? DerivationPath(path) else { throw ValidationError("\(path.prefix(80).debugDescription) is not a derivation path (m/84'/0'/0')") }
        guard parsed.indexes.count <= CKTap.maxDerivePathDepth, parsed.indexes.allSatisfy({ $0 & CKTap.hardened != 0 }) else {
            throw ValidationError("a TAPSIGNER derives to hardened levels only, at most \(CKTap.maxDerivePathDepth) (m/84'/0'/0'); it signs up to 2 "
                                  + "unhardened levels below that path itself (key and psbt take the full path)")
        }
        return parsed.indexes
    }

    func run() throws {
        let indexes = try indexes()
        try runTapCommand(card, product: .tapsigner, json: json, human: { ["derived to \($0.text("path")): public key \($0.text("public_key"))"] }) { session in
            let cvc = try session.cvc()
            return TapCardRecords.derivation(try session.mapping("derive") { try session.card.derive(path: indexes, cvc: cvc) })
        }
    }
}

struct TapsignerXpub: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xpub", abstract: "The extended public key at the card's derivation, or the master's with --master.",
        discussion: "JSON: {xpub, path}.")
    @OptionGroup var card: CardOptions
    @Flag(help: "The master extended public key (m) instead of the derived one.") var master = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .tapsigner, json: json, human: { [$0.text("xpub")] }) { session in
            let cvc = try session.cvc()
            let testnet = session.status?.isTestnet ?? false
            let node = try session.mapping("xpub") { try session.card.xpub(master: master, cvc: cvc) }
            let path = master ? "m" : (session.status?.path).map(TapCardRecords.pathText) ?? "m"
            return .object([("xpub", .string(node.extendedPublicKey(testnet ? .tpub : .xpub))), ("path", .string(path))])
        }
    }
}

struct TapsignerBackup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write the card's encrypted backup to a new file (0600), or decrypt one with the backup key printed on the card.",
        discussion: """
            --out FILE: the card's backup (AES-128-CTR under the key on the card), written whole or not at all, never over a file. \
            --decrypt FILE: opens a backup with the key printed on the card (32 hex digits) from KEYHOST_BACKUP_KEY or the variable \
            --backup-key-env names, else a prompt; prints the path and master xpub, and the master xprv only with --show-key. \
            No card is needed for --decrypt. JSON: {out, bytes} or {path, xpub, xprv?}.
            """)
    @OptionGroup var card: CardOptions
    @Option(help: ArgumentHelp("Write the encrypted backup to this new file.", valueName: "file")) var out: String?
    @Option(help: ArgumentHelp("Decrypt this backup file instead (no card needed).", valueName: "file")) var decrypt: String?
    @Option(help: ArgumentHelp("Read the backup key from environment variable VAR (default KEYHOST_BACKUP_KEY).", valueName: "var")) var backupKeyEnv: String?
    @Flag(help: "With --decrypt: print the master extended private key too.") var showKey = false
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (out == nil) != (decrypt == nil) else { throw ValidationError("give one of --out FILE (back the card up) or --decrypt FILE (open a backup)") }
        if showKey && decrypt == nil { throw ValidationError("--show-key goes with --decrypt") }
        try TapCardSecret.validateVariable("--backup-key-env", backupKeyEnv)
    }

    func run() throws {
        if let decrypt { return try Failure.exitOnError { try openBackup(decrypt) } }
        guard let out else { return }
        try runTapCommand(card, product: .tapsigner, json: json, human: { ["wrote the encrypted backup (\($0.text("bytes")) bytes) to \($0.text("out"))"] }) { session in
            let cvc = try session.cvc()
            let data = try session.mapping("backup") { try session.card.backup(cvc: cvc) }
            try OutputFile.create(out, data)
            return .object([("out", .string(out)), ("bytes", .integer(Int64(data.count)))])
        }
    }

    private func openBackup(_ file: String) throws {
        let data: [UInt8]
        do { data = try BoundedFile.read(file, limit: 4096, regularOnly: true) } catch let error as BoundedFile.ReadError {
            throw Failure.kind("read_failed", "cannot read the backup \(file): \(error.problem)")
        }
        let typed = try TapCardSecret.backupKey(variable: backupKeyEnv).resolve(nil)
        var text = typed.revealedBytes()
        defer { zero(&text) }
        guard let raw = try? Hex.decode(String(decoding: text.filter { $0 != 0x20 && $0 != 0x2D }, as: UTF8.self)), raw.count == 16 else {
            throw Failure.kind("invalid_argument", "the backup key is 32 hex digits (as printed on the card); the one given is not")
        }
        let backup: CKTapBackup
        do { backup = try CKTapBackup(data: data, key: SecretBytes(raw)) } catch let error as CKTapError {
            throw Failure.kind(error.kind, "\(error)")
        }
        let xpub = backup.master.neutered().extendedPublicKey()
        var fields: [(String, Record)] = [("path", .string(backup.path)), ("xpub", .string(xpub))]
        if showKey { fields.append(("xprv", .string(try backup.master.extendedPrivateKey()))) }
        let record = Record.object(fields)
        if json {
            print(record.json())
        } else {
            print("path \(backup.path)")
            print("master xpub \(xpub)")
            if showKey { print("master xprv \(record.text("xprv"))") }
        }
    }
}

struct TapsignerChangeCVC: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-cvc", abstract: "Change the card's CVC (6 to 32 digits); the card takes a new one only after a backup.",
        discussion: "The current CVC from KEYHOST_CVC (or --cvc-env), the new one from KEYHOST_NEW_CVC (or --new-cvc-env), else prompts "
            + "(the new one asked twice). JSON: {changed: \"cvc\"}.")
    @OptionGroup var card: CardOptions
    @Option(help: ArgumentHelp("Read the new CVC from environment variable VAR (default KEYHOST_NEW_CVC).", valueName: "var")) var newCvcEnv: String?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws { try TapCardSecret.validateVariable("--new-cvc-env", newCvcEnv) }

    func run() throws {
        try runTapCommand(card, product: .tapsigner, json: json, human: { _ in ["CVC changed"] }) { session in
            let cvc = try session.cvc()
            let new = try TapCardSecret.newCVC(variable: newCvcEnv).resolve(nil)
            var digits = new.revealedBytes()
            defer { zero(&digits) }
            guard CKTap.cvcLengths.contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw Failure.kind("invalid_argument", "a new CVC is 6 to 32 digits; the one given is not (nothing was changed)")
            }
            try session.mapping("change") { try session.card.changeCVC(from: cvc, to: new) }
            return .object([("changed", .string("cvc"))])
        }
    }
}
