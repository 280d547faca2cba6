import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct CardInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "INIT a blank card: set its PIN (6 digits), PUK (12 digits) and, on 3.x, pairing password; then pair (3.x).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PUK", "KEYHOST_PAIRING_PASSWORD (3.x)", "KEYHOST_DURESS_PIN (with --duress-pin)"],
                                extra: "Prompts ask twice.")
            + """
             --generate-secrets makes them instead, from the system's random generator (a PUK never starting with the PIN), \
            and prints them once, on standard output: keyhost keeps them nowhere, so write them down (it refuses while \
            KEYHOST_PIN, KEYHOST_PUK or KEYHOST_PAIRING_PASSWORD is set). Every Keycard has a duress PIN that opens a decoy \
            wallet; keyhost never lets it be your PIN: without --duress-pin it sends six random digits nobody knows, and a \
            PUK that starts with the PIN is refused. A 3.x card is paired right away and the pairing stored, so later \
            commands reuse it. With --reader virtual --card-state FILE a missing FILE becomes a new blank software card \
            (--applet 3.2 or 4.0). JSON: {applet, instance_uid, identity_public_key, secure_channel, pairing_index} (4.x \
            cards: no instance UID, 3.x: no identity key), with --generate-secrets also {pin, puk, pairing_password} \
            (pairing_password null on 4.x).
            """
            + "\n" + HelpExamples.text(
                "keyhost card init --reader virtual --card-state new.json --applet 4.0   # PIN and PUK from the environment or prompts",
                "keyhost card init --generate-secrets               # a real blank card: prints new secrets once")
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("Wrong PIN entries before the PIN blocks (2...10; card default 3).", valueName: "n"))
    var pinRetries: Int?

    @Option(help: ArgumentHelp("Wrong PUK entries before the PUK blocks (3...12; card default 5).", valueName: "n"))
    var pukRetries: Int?

    @Flag(help: "Set a duress PIN of your choice (from KEYHOST_DURESS_PIN or a prompt); it must differ from the PIN.")
    var duressPIN = false

    @Flag(help: "Make a random PIN, PUK and (3.x) pairing password, use them and print them once.")
    var generateSecrets = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if let pinRetries, !(2...10).contains(pinRetries) { throw ValidationError("--pin-retries must be 2...10") }
        if let pukRetries, !(3...12).contains(pukRetries) { throw ValidationError("--puk-retries must be 3...12") }
    }

    func run() throws {
        try Failure.exitOnError {
            let connection = try card.connect(access: .selected, requirement: .anything, creates: true)
            defer { connection.close() }
            do {
                try show(try connection.initialize(pinRetries: pinRetries, pukRetries: pukRetries, duressPIN: duressPIN,
                                               generateSecrets: generateSecrets))
            } catch let incomplete as CardInitIncomplete {
                // The card took the secrets keyhost made: they are shown even though pairing failed, or nobody would know them.
                try show(incomplete.result)
                throw incomplete.error
            }
        }
    }

    private func show(_ result: Record) throws {
        if json {
            print(result.json())
            return
        }
        var line = "initialised the card (applet \(result.text("applet")), instance UID \(result.text("instance_uid")))"
        if case .integer(let index)? = result["pairing_index"] { line += "; paired in slot \(index)" }
        print(line)
        guard result["pin"] != nil else { return }
        print("PIN: \(result.text("pin"))")
        print("PUK: \(result.text("puk"))")
        if case .string? = result["pairing_password"] { print("pairing password: \(result.text("pairing_password"))") }
        OutputFile.note("these secrets are printed once and kept nowhere: write them down")
    }
}
