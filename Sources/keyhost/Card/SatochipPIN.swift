import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct SatochipVerifyPIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-pin",
        abstract: "VERIFY PIN: check the Satochip's PIN (a wrong one costs a try; the error says how many are left).",
        discussion: secretsHelp(["KEYHOST_PIN (or the variable --pin-env names)"])
            + " JSON: {verified, pin_retries}; a wrong PIN is the error kind wrong_pin with retries_left (exit 1)."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: { ["PIN verified (\($0.text("pin_retries")) tries left)"] }) { connection in
            try connection.requireSetUp()
            return try connection.verifiedPIN(try connection.frontEnd.pin.resolve(nil))
        }
    }
}

struct SatochipChangePIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-pin",
        abstract: "CHANGE PIN: set a new PIN (4 to 16 bytes).",
        discussion: secretsHelp(["KEYHOST_PIN (the current one, or the variable --pin-env names)", "KEYHOST_NEW_PIN"],
                                extra: "A prompt for the new PIN asks twice.") + " JSON: {changed: \"pin\"}."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: { _ in ["PIN changed"] }) { connection in
            try connection.requireSetUp()
            return try connection.changePIN(old: try connection.frontEnd.pin.resolve(nil), new: try CardSecret.newPIN.resolve())
        }
    }
}

struct SatochipUnblockPIN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unblock-pin",
        abstract: "UNBLOCK PIN: with the PUK, give a blocked PIN its tries back (the PIN keeps its value).",
        discussion: secretsHelp(["KEYHOST_PUK"]) + " A wrong PUK is the error kind wrong_puk with retries_left."
            + " JSON: {pin_retries, puk_retries}."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: { ["PIN unblocked (\($0.text("pin_retries")) tries left)"] }) { connection in
            try connection.requireSetUp()
            return try connection.unblockPIN(puk: try CardSecret.puk.resolve())
        }
    }
}
