import KeyhostCard
import KeyhostCrypto

/// Who a card session talks to: Lua (`card.open{}`) or the command line (`keyhost card …`, `--card`). The session
/// logic is the same for both; this value carries what differs, so no service code asks "is this the command line?":
/// the hints its errors give, how the software card and the set-up commands are named, where secrets come from when
/// the caller passed none, and whether a full card may be paired through its temporary slot.
///
/// This file is the one wording table of the card services: every command-line spelling (`keyhost …`, `--…`,
/// `KEYHOST_…`) the services need is here, so the rest of KeyhostServices names no command, option or variable.
public struct CardFrontEnd: Sendable {
    /// How the caller's options pick the software card (`reader = "virtual"`, `--reader virtual --card-state FILE`).
    public var virtualCard: String
    /// What numbers the real readers (`card.list()`, `'keyhost card list'`).
    public var readerList: String
    /// How a blank card is set up.
    public var setUp: String
    /// How a card is given a master key.
    public var loadKey: String
    /// How a Satochip is set up, and given a seed.
    public var satochipSetUp: String
    public var satochipImportSeed: String
    /// How a certificate authority is trusted (a Satochip's, here).
    public var trustCA: String
    /// How this host gives its pairing slot back, and frees the others.
    public var unpairAdvice: String
    /// Where the PIN comes from when the caller passed none.
    public var pin: SecretInput
    /// Where a new pairing's password comes from when the caller passed none.
    public var pairingPassword: SecretInput
    /// Where a tap card's CVC (printed on the TAPSIGNER, or on the SATSCARD's back) comes from when the caller passed none.
    public var cvc: SecretInput
    /// Spend a tap card's CVC back-off (after wrong CVCs) by sending `wait` until it is over; otherwise the card is
    /// refused with the seconds left. Never done unless the caller asked.
    public var waitBackoff = false
    /// How the caller asks for `waitBackoff`.
    public var waitBackoffAdvice: String
    /// How a blank TAPSIGNER is set up.
    public var tapsignerSetUp = "keyhost card tapsigner setup"
    /// With every pairing slot taken, pair through the 3.2 applet's temporary slot (gone at the next SELECT) instead of
    /// failing `no_free_slot`. Lua's `s:auto` does (and says so in its result); commands only for `unpair --others`.
    public var temporaryPairing: Bool
    /// Told when a pairing slot is taken or the temporary one used (commands print it on standard error).
    public var notice: (@Sendable (String) -> Void)?
    /// The same error with hints this front end can follow (the kind, status word and fields stay).
    let reword: @Sendable (CardServiceError) -> CardServiceError

    /// Lua: options of `card.open{}` and methods of the session.
    public static let lua = CardFrontEnd(
        virtualCard: "reader = \"virtual\"", readerList: "card.list()",
        setUp: "s:init{pin = ..., puk = ..., pairing_password = ...}", loadKey: "load or generate one first (s:load_seed, s:generate_key)",
        satochipSetUp: "set it up with s:setup{pin = ..., puk = ...} (card.open_satochip)", satochipImportSeed: "import one with s:import_seed(seed)",
        trustCA: "open the card with trusted_ca_keys = { <its key> }",
        unpairAdvice: "s:unpair(index) gives this one back, s:unpair_others() frees the rest",
        pin: SecretInput(what: "PIN", environment: Environment.pin,
                         hint: "pass pin = ..., set \(Environment.pin), or run keyhost on a terminal to be asked"),
        pairingPassword: SecretInput(what: "pairing password", environment: Environment.pairingPassword,
                                     hint: "pass pairing_password = ..., set \(Environment.pairingPassword), or run keyhost on a terminal to be asked"),
        cvc: SecretInput(what: "CVC", environment: Environment.cvc, hint: "pass cvc = ..., set \(Environment.cvc), or run keyhost on a terminal to be asked",
                         device: "tap card"),
        waitBackoffAdvice: "pass wait_backoff = true to card.open{} to wait it out", tapsignerSetUp: "the command line's card tapsigner setup",
        temporaryPairing: true, notice: nil, reword: { $0 })

    /// The command line: options, environment variables and `keyhost card …` commands. `virtualCard` is how the
    /// command picks the software card (`--card virtual --card-state FILE` for `discover`).
    public static func commandLine(virtualCard: String = "--reader virtual --card-state FILE", pinVariable: String? = nil,
                                   pairingPasswordVariable: String? = nil, cvcVariable: String? = nil) -> CardFrontEnd {
        CardFrontEnd(
            virtualCard: virtualCard, readerList: "'keyhost card list'",
            setUp: "keyhost card init", loadKey: "load one with keyhost card load-seed or generate one with keyhost card generate-key",
            satochipSetUp: "set it up with keyhost card satochip setup", satochipImportSeed: "import one with keyhost card satochip import-seed",
            trustCA: "name its public key with --trusted-ca KEY",
            unpairAdvice: "keyhost card unpair gives this one back, keyhost card unpair --others frees the rest",
            pin: commandLineSecret("PIN", Environment.pin, option: "--pin-env", variable: pinVariable),
            pairingPassword: commandLineSecret("pairing password", Environment.pairingPassword, option: "--pairing-password-env",
                                               variable: pairingPasswordVariable),
            cvc: commandLineSecret("CVC", Environment.cvc, option: "--cvc-env", variable: cvcVariable, device: "tap card"),
            waitBackoffAdvice: "run the command again with --wait-backoff to wait it out",
            temporaryPairing: false, notice: nil, reword: rewordForCommandLine)
    }

    /// A secret of the command line: `variable` (named by `option VAR`) when given, else `environment`, else the prompt.
    static func commandLineSecret(_ what: String, _ environment: String, option: String, variable: String?, device: String = "Keycard") -> SecretInput {
        if let variable {
            return SecretInput(what: what, environment: variable, hint: "set \(variable) (named by \(option)), or drop \(option) to be asked on a terminal",
                               required: true, device: device)
        }
        return SecretInput(what: what, environment: environment,
                           hint: "set the environment variable \(environment) or name another with \(option) VAR (secrets are never taken "
                               + "on the command line), or run keyhost on a terminal to be asked", device: device)
    }

    /// The environment variables both front ends read.
    public enum Environment {
        public static let pin = "KEYHOST_PIN"
        public static let pairingPassword = "KEYHOST_PAIRING_PASSWORD"
        /// A tap card's CVC.
        public static let cvc = "KEYHOST_CVC"
        /// `apdu` or `apdu,plaintext`: the APDU trace (`CardTrace`).
        public static let trace = "KEYHOST_TRACE"
        /// A debug build's crash point (`CrashFailpoint`).
        public static let failpoint = "KEYHOST_FAILPOINT"
    }

    /// The prefixes of the seeded randomness (`seed` of `card.open{}`): recorded transcripts replay only with the same
    /// bytes, so these never change. Kept here with the other spellings of the program's name.
    public enum SeedDomain {
        public static let client = "keyhost card client "
        public static let virtualCard = "keyhost virtual card "
    }

    /// Runs `body`, turning card-stack errors into structured errors worded for this front end.
    public func mapping<R>(_ command: String?, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            let mapped = CardServiceError.from(error, command: command)
            if let card = mapped as? CardServiceError { throw reword(card) }
            throw mapped
        }
    }

    /// The same error worded for this front end.
    public func worded(_ error: CardServiceError) -> CardServiceError { reword(error) }

    /// What a new persistent pairing cost: slots are few (10 on a 3.2 card) and each host keeps its own until freed.
    public func slotTaken(_ index: UInt8, freeBefore: Int?) -> String {
        let left = freeBefore.map { max(0, $0 - 1) }
        let count = left.map { $0 == 1 ? "1 pairing slot is" : "\($0) pairing slots are" } ?? "an unknown number of pairing slots are"
        return "paired with the card: this host now holds its pairing slot \(index); \(count) left free "
    + "(\(unpairAdvice))"
    }

    /// Hints that name Lua methods (`s:unblock_pin(…)`) name the commands instead.
    private static let rewordForCommandLine: @Sendable (CardServiceError) -> CardServiceError = { error in
        let text: String
        switch error.kind {
        case "pin_blocked": text = "PIN blocked: unblock it with the PUK: keyhost card unblock-pin"
        case "not_found" where error.command == "\(KeycardInstruction.sign)":
            text = "no PIN-less path is set on the card; set one with 'keyhost card set-pinless-path --path m/…' (it takes the PIN once)"
        case "no_free_slot":
            text = "no free pairing slot: other hosts hold every slot of the card; free them with 'keyhost card unpair --others' "
                + "(it works from this host too, through the card's temporary slot), or factory reset the card"
        case "not_initialized": text = "the card is not initialised; set it up with keyhost card init"
        case "channel_reset": text = "the card reset the secure channel; run the command again"
        case "channel_not_open": text = "\(error.command ?? "the command") needs an open secure channel; run the command again"
        case "not_paired": text = "no pairing with this card: pair with keyhost card pair"
        case "pairing_rejected": text = "the card does not know this pairing (slot freed or card reset); pair again with keyhost card pair"
        case "untrusted_card":
            guard let caKey = error.caKey else { return error }
            let hex = Hex.encode(caKey)
            text = "untrusted card: certificate signed by unknown CA \(hex); if you trust that certificate authority, "
                + "name its public key with --trusted-ca KEY: --trusted-ca \(hex)"
        default: return error
        }
        return CardServiceError(kind: error.kind, text, statusWord: error.statusWord, retriesLeft: error.retriesLeft, command: error.command,
                                caKey: error.caKey)
    }
}
