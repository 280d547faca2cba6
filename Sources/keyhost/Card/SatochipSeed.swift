import ArgumentParser
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

struct SatochipImportSeed: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-seed",
        abstract: "BIP32 IMPORT SEED: put the BIP39 seed of a mnemonic (and passphrase) on the Satochip.",
        discussion: secretsHelp(["KEYHOST_MNEMONIC (or the variable --mnemonic-env names)", "KEYHOST_PIN (or --pin-env's)"])
            + " The passphrase as every command taking a mnemonic reads it: KEYHOST_PASSPHRASE when set, --passphrase-env VAR,"
            + " --passphrase-prompt, or --no-passphrase for none. A card that holds a seed keeps it: reset it first"
            + " (keyhost card satochip reset-seed). JSON: {seeded, authentikey}."
            + "\n" + HelpExamples.text(
                "KEYHOST_MNEMONIC=\"$(cat words.txt)\" keyhost card satochip import-seed --reader virtual --card-state s.json")
    )

    @OptionGroup var card: CardOptions
    @OptionGroup var mnemonic: MnemonicOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: { ["imported the seed (authentikey \($0.text("authentikey")))"] }) { connection in
            try connection.requireNoSeed()
            // The mnemonic is read and checked before the PIN is tried, so a typo costs no PIN try.
            let seed = try mnemonic.seed(alternatives: "")
            try connection.verifyPIN()
            return try connection.importSeed(seed)
        }
    }
}

struct SatochipResetSeed: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-seed",
        abstract: "BIP32 RESET SEED: erase the Satochip's seed (its PIN and PUK stay). Irreversible.",
        discussion: secretsHelp(["KEYHOST_PIN (or --pin-env's)"])
            + " The card must first prove it is genuine: its device certificate must chain to a trusted CA (--trusted-ca KEY;"
            + " the software card's test CA for the software card only) and it must hold the certificate's key; an untrusted"
            + " card is refused (kind untrusted_card). Needs confirmation: a question on the terminal, or --yes."
            + " JSON: {seeded}."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Erase without asking (scripts).")
    var yes = false

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: { _ in ["the Satochip's seed is erased"] }) { connection in
            try connection.requireSeed()
            try connection.verifyPIN()
            let trust = try connection.requireTrusted("reset-seed")
            if !yes {
                switch TerminalQuestion.ask("Reset seed erases the seed of the Satochip in \(connection.readerName) "
                                            + "(device key \(Hex.encode(trust.deviceKey ?? []))). Type yes to erase it: ") {
                case nil:
                    throw Failure.kind("not_confirmed", "reset-seed needs confirmation: run it on a terminal to be asked, or pass --yes; nothing was erased")
                case let answer? where answer.lowercased() == "yes":
                    break
                default:
                    throw Failure.kind("not_confirmed", "not confirmed; nothing was erased")
                }
            }
            // RESET SEED takes the PIN itself (and logs it out).
            return try connection.resetSeed(pin: try connection.frontEnd.pin.resolve(nil))
        }
    }
}

struct SatochipLabel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label",
        abstract: "GET LABEL, or with NEW, SET LABEL (at most 64 bytes of UTF-8).",
        discussion: secretsHelp(["KEYHOST_PIN (or --pin-env's)"]) + " JSON: {label}."
    )

    @OptionGroup var card: CardOptions

    @Argument(help: ArgumentHelp("The new label; without it the label is printed.", valueName: "new"))
    var new: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if let new, new.utf8.count > 64 { throw ValidationError("a Satochip label is at most 64 bytes of UTF-8, this one has \(new.utf8.count)") }
    }

    func run() throws {
        try runSatochipCommand(card, json: json, human: { ["label: \($0.text("label"))"] }) { connection in
            try connection.requireSetUp()
            try connection.verifyPIN()
            return try connection.label(setting: new)
        }
    }
}

struct SatochipCertificateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certificate",
        abstract: "The authenticity check: does the device certificate chain to a trusted CA, and does the card hold its key?",
        discussion: secretsHelp(["KEYHOST_PIN (or --pin-env's)"])
            + " Trusted CA keys come from --trusted-ca (repeatable); the software card's test CA is trusted for the software"
            + " card (--reader virtual) only. An untrusted card is a verdict, not an error: trusted is false, the problem is"
            + " said, and the text output warns on standard error. JSON: {reader, trusted, device_public_key, ca_key, subject, problem}."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        var verdict: SatochipTrust?
        try runSatochipCommand(card, json: json, human: { result in
            result["trusted"] == .bool(true)
                ? ["certificate trusted: yes (CA \(result.text("ca_key")))", "device public key: \(result.text("device_public_key"))",
                   "subject: \(result.text("subject"))"]
                : ["certificate trusted: NO (\(result.text("problem")))"]
        }) { connection in
            try connection.requireSetUp()
            try connection.verifyPIN()
            let (record, trust) = try connection.certificateRecord()
            verdict = trust
            return record
        }
        if let verdict, !verdict.isTrusted, !json { SatochipText.warnUntrusted(verdict) }
    }
}
