import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

struct CardRemoveKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-key",
        abstract: "REMOVE KEY: erase the card's key (gone for good unless you have its backup); PIN and pairings stay.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " Needs confirmation, as factory-reset: on a terminal keyhost asks for it; scripts pass --confirm with the "
            + "key UID ('keyhost card status' and 'info' print it), which must be the key on the card. Without either it "
            + "refuses, before the PIN is asked. The PIN-less path goes with the key. JSON: {key_uid, has_master_key} "
            + "(the UID of the key removed)."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The key to erase: its key UID (hex, from 'keyhost card status'); no question is asked.", valueName: "key-uid"))
    var confirm: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            ["removed the key (key UID \(result.text("key_uid"))): the card holds no key now"]
        }) { connection in
            guard let keyUID = connection.selectInfo.keyUID.map({ Hex.encode($0) }) else {
                throw Failure.kind("no_key", "the card in \(connection.readerName) holds no key; there is nothing to remove")
            }
            if let confirm {
                guard confirm.lowercased() == keyUID else {
                    throw Failure.kind("not_confirmed", "--confirm \(confirm) is not the key UID of the key on the card in \(connection.readerName) "
                                       + "(\(keyUID)); nothing was removed")
                }
            } else {
                switch TerminalQuestion.ask("REMOVE KEY erases the key with key UID \(keyUID) from the Keycard in \(connection.readerName); "
                                            + "without its backup it is gone for good. Type yes to erase it: ") {
                case nil:
                    throw Failure.kind("not_confirmed", "remove-key needs confirmation: run keyhost card remove-key on a terminal to be asked, "
                                       + "or pass --confirm <key UID> (keyhost card status prints it); nothing was removed")
                case let answer? where answer.lowercased() == "yes":
                    break
                default:
                    throw Failure.kind("not_confirmed", "not confirmed; nothing was removed")
                }
            }
            try connection.open(.pinVerified)
            return try connection.removeKey()
        }
    }
}
