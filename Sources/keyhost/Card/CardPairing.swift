import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct CardPair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "PAIR with a 3.x card and store the pairing, so later commands reuse its slot (4.x cards do not pair).",
        discussion: secretsHelp(["KEYHOST_PAIRING_PASSWORD"])
            + " A stored pairing the card still accepts is kept rather than taking a second slot. The pairing key is never printed; "
            + "it is kept in $XDG_STATE_HOME/keyhost/pairings.json (0600). JSON: {instance_uid, pairing_index, new_pairing}."
            + "\n" + HelpExamples.text(
                "keyhost card pair --reader virtual --card-state c.json",
                "keyhost card pair --reader 0 --json")
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            [result["new_pairing"] == .bool(true) ? "paired in slot \(result.text("pairing_index"))"
                : "already paired in slot \(result.text("pairing_index")) (kept)"]
        }) { try $0.pair() }
    }
}

struct CardUnpair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "UNPAIR a 3.x card's pairing slot: this host's own (default), --index N, or --others.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (when not paired yet)"])
            + " Freeing this host's own slot also forgets the stored pairing. JSON: {unpaired, forgot_stored_pairing}."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The slot to free (0...255).", valueName: "n"))
    var index: Int?

    @Flag(help: "Free every slot but this host's (other hosts must pair again).")
    var others = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if let index, !(0...255).contains(index) { throw ValidationError("--index must be a pairing slot, 0...255") }
        if index != nil && others { throw ValidationError("--index and --others exclude each other") }
    }

    func run() throws {
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            let freed = result.text("unpaired")
            var line = freed.isEmpty ? "no slot freed" : "freed pairing slot(s) \(freed)"
            if result["forgot_stored_pairing"] == .bool(true) { line += "; this host's stored pairing is forgotten" }
            return [line]
        }) { connection in
            try connection.requireV1("unpair")
            var occupied: [Int] = []
            if others {
                occupied = try connection.occupiedPairingSlots()
                connection.allowTemporaryPairing()
            }
            try connection.open(.pinVerified)
            return try connection.unpair(index: index, others: others, occupied: occupied)
        }
    }
}
