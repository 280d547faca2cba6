import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// Opens the tap card `options` name (a `product`), runs `body` on it and prints its record (`--json`) or `human`'s lines.
func runTapCommand(_ options: CardOptions, product: CardFamily, json: Bool, human: @escaping (Record) -> [String],
                   _ body: (TapCardSession) throws -> Record) throws {
    try Failure.exitOnError {
        // A software tap card's state file is made by its first command, as `card serve --applet` makes it.
        let request = try options.request()
        let session = try TapCardSession.open(request, readers: [PCSCReaders()], frontEnd: options.frontEnd(), product: product)
        defer { session.close() }
        let result = try body(session)
        if json {
            print(result.json())
        } else {
            for line in human(result) { print(line) }
        }
    }
}

/// The secrets only the tap-card commands take, each from its environment variable or a prompt without echo.
enum TapCardSecret {
    /// A TAPSIGNER's new CVC (asked twice at a prompt).
    static func newCVC(variable: String?) -> SecretInput {
        secret("new CVC", "KEYHOST_NEW_CVC", option: "--new-cvc-env", variable: variable, confirm: true)
    }

    /// The backup key printed on a TAPSIGNER (32 hex digits).
    static func backupKey(variable: String?) -> SecretInput {
        secret("backup key", "KEYHOST_BACKUP_KEY", option: "--backup-key-env", variable: variable, confirm: false)
    }

    private static func secret(_ what: String, _ environment: String, option: String, variable: String?, confirm: Bool) -> SecretInput {
        var input = SecretInput(what: what, environment: variable ?? environment,
                                hint: "set the environment variable \(variable ?? environment)"
                                    + (variable == nil ? " or name another with \(option) VAR" : " (named by \(option))")
                                    + " (secrets are never taken on the command line), or run keyhost on a terminal to be asked",
                                required: variable != nil, device: "TAPSIGNER")
        input.confirm = confirm
        return input
    }

    /// Checks an option naming an environment variable (`--new-cvc-env VAR`).
    static func validateVariable(_ option: String, _ variable: String?) throws {
        guard let variable else { return }
        try SecretArguments.refuse([(option, variable)])
        guard !variable.isEmpty, variable.utf8.allSatisfy({ $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
            throw ValidationError("\(option) takes the name of an environment variable (letters, digits, _), not \(variable.debugDescription); "
                                  + "the secret itself is never taken on the command line")
        }
    }
}

/// `--chain-code HEX`: the caller's 32 bytes of entropy mixed into a new key; random when not given.
struct TapEntropyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("32 bytes of your own entropy (64 hex digits) the card mixes into its new key as the chain code. Default: 32 random bytes from this host.", valueName: "hex"))
    var chainCode: String?

    func validate() throws { _ = try bytes() }

    /// The entropy given, else 32 random bytes.
    func bytes() throws -> [UInt8] {
        guard let chainCode else { return SystemRandom().bytes(32) }
        guard let bytes = try? Hex.decode(chainCode), bytes.count == 32 else {
            throw ValidationError("--chain-code takes 32 bytes as 64 hex digits")
        }
        return bytes
    }
}

/// A human line for a tap card's status.
func tapStatusLine(_ record: Record) -> String {
    "\(record.text("product")) \(record.text("version")) \(record.text("card_ident")): \(record.text("state"))"
}
