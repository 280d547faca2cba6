import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct CardVerifyPIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-pin",
        abstract: "VERIFY PIN: check the PIN (a wrong one costs a try; the error says how many are left).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " JSON: {verified, pin_retries}; a wrong PIN is the error kind wrong_pin with retries_left."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { result in
            ["PIN verified (\(result.text("pin_retries")) tries left)"]
        }) { try $0.verifiedPIN() }
    }
}

/// change-pin, change-puk, change-pairing-password: the PIN verified, then CHANGE PIN with a new secret.
struct CardChangePIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pin",
        abstract: "CHANGE PIN: set a new 6-digit PIN.",
        discussion: secretsHelp(["KEYHOST_PIN (the current one)", "KEYHOST_NEW_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"],
                                extra: "A prompt for the new PIN asks twice.") + " JSON: {changed: \"pin\"}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { _ in ["PIN changed"] }) { try $0.changePIN() }
    }
}

struct CardChangePUK: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-puk",
        abstract: "CHANGE PIN (PUK): set a new 12-digit PUK.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_NEW_PUK", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"],
                                extra: "A prompt for the new PUK asks twice.") + " JSON: {changed: \"puk\"}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .initialized, human: { _ in ["PUK changed"] }) { try $0.changePUK() }
    }
}

struct CardChangePairingPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pairing-password",
        abstract: "CHANGE PIN (pairing secret, 3.x): set a new pairing password; existing pairings stay valid.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_NEW_PAIRING_PASSWORD", "KEYHOST_PAIRING_PASSWORD (when not paired yet)"],
                                extra: "A prompt for the new password asks twice.") + " JSON: {changed: \"pairing_password\"}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { _ in ["pairing password changed"] }) { connection in
            try connection.requireV1("change-pairing-password")
            try connection.open(.pinVerified)
            return try connection.changePairingPassword()
        }
    }
}

struct CardUnblockPIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unblock-pin",
        abstract: "UNBLOCK PIN: with the PUK, set a new PIN on a card whose PIN is blocked.",
        discussion: secretsHelp(["KEYHOST_PUK", "KEYHOST_NEW_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"],
                                extra: "A prompt for the new PIN asks twice.")
            + " A wrong PUK is the error kind wrong_puk with retries_left. JSON: {pin_retries, puk_retries}."
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .secureChannel, requirement: .initialized, human: { result in
            ["PIN unblocked and set (\(result.text("pin_retries")) tries left)"]
        }) { try $0.unblockPIN() }
    }
}
