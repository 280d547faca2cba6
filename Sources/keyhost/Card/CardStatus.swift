import ArgumentParser
import KeyhostRecord
import KeyhostServices

struct CardStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "GET STATUS over the secure channel: PIN and PUK tries left, whether a key is loaded (no PIN needed).",
        discussion: secretsHelp(["KEYHOST_PAIRING_PASSWORD"], extra: "It is needed only by a 3.x card this host has not paired with yet.")
            + " JSON: {applet, instance_uid, key_uid, pin_retries, puk_retries, has_master_key, path} (path: the current key's, 3.x)."
            + "\n" + HelpExamples.text(
                "keyhost card status --reader virtual --card-state c.json",
                "keyhost card status --reader 0 --json")
    )

    @OptionGroup var card: CardSessionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .secureChannel, requirement: .initialized, human: { result in
            ["applet \(result.text("applet")), PIN tries left \(result.text("pin_retries")), PUK tries left \(result.text("puk_retries")), "
                + (result["has_master_key"] == .bool(true) ? "key loaded (key UID \(result.text("key_uid")))" : "no key loaded")]
        }) { try $0.status() }
    }
}
