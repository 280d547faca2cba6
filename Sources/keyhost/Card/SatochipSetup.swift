import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct SatochipSetup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "SETUP: give a new Satochip its PIN and PUK (4 to 16 bytes each).",
        discussion: secretsHelp(["KEYHOST_PIN (or the variable --pin-env names)", "KEYHOST_PUK"], extra: "A prompt asks for each twice.")
            + " With --reader virtual --card-state FILE a software Satochip is made in FILE (0600). JSON: {setup_done, pin_retries, puk_retries}."
            + "\n" + HelpExamples.text(
                "KEYHOST_PIN=1234 KEYHOST_PUK=87654321 keyhost card satochip setup --reader virtual --card-state s.json")
    )

    @OptionGroup var card: CardOptions

    @Option(help: ArgumentHelp("PIN tries before it blocks (1 to 63).", valueName: "n"))
    var pinTries = 5

    @Option(help: ArgumentHelp("PUK tries before it blocks (1 to 63).", valueName: "n"))
    var pukTries = 5

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        // 63 and not 255: the applet reports tries left in the 6 low bits of 63Cx.
        for (name, value) in [("--pin-tries", pinTries), ("--puk-tries", pukTries)] where !(1...63).contains(value) {
            throw ValidationError("\(name) must be 1 to 63, not \(value)")
        }
    }

    func run() throws {
        try runSatochipCommand(card, json: json, creates: true, human: { result in
            ["Satochip set up (PIN: \(result.text("pin_retries")) tries, PUK: \(result.text("puk_retries")) tries)"]
        }) { connection in
            try connection.requireNotSetUp()
            let pin = try connection.frontEnd.pin.setting.resolve(nil)
            let puk = try CardSecret.puk.resolve(setting: true)
            return try connection.setup(pin: pin, puk: puk, pinTries: pinTries, pukTries: pukTries)
        }
    }
}

struct SatochipStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "GET STATUS: versions, tries left, whether the card is set up and seeded (no PIN needed).",
        discussion: "JSON: {reader, family, version, state, protocol_version, applet_version, setup_done, seeded, needs_2fa, "
            + "needs_secure_channel, pin_retries, puk_retries, label, certificate_trusted, certificate_problem, device_public_key} "
            + "(label and certificate null: 'keyhost card info' with KEYHOST_PIN, and 'keyhost card satochip certificate', read them)."
    )

    @OptionGroup var card: CardOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runSatochipCommand(card, json: json, human: SatochipText.lines) { try $0.statusRecord() }
    }
}
