import ArgumentParser
import KeyhostCard
import KeyhostRecord
import KeyhostServices

struct CardSetPinlessPath: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-pinless-path",
        abstract: "SET PINLESS PATH (3.x): let the key at --path sign without PIN (keyhost card sign --pinless); --clear unsets it.",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " Anyone holding the card can then sign any digest with that key, without PIN or pairing: give it a key meant for "
            + "that (a small spending account), never the master key (refused). Loading, generating or removing a key and a "
            + "factory reset unset it too. Applet 4.x has no PIN-less path. JSON: {pinless_path} (null after --clear)."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The PIN-less key's path from the master key, e.g. m/44'/60'/0'/0/0.", valueName: "path"))
    var path: String?

    @Flag(help: "Unset the PIN-less path: no key signs without PIN any more.")
    var clear = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        _ = try keyPath()
    }

    /// The path to set, nil for --clear.
    func keyPath() throws -> KeyPath? {
        switch (path, clear) {
        case (nil, false): throw ValidationError("give --path m/… to set the PIN-less path, or --clear to unset it")
        case (.some, true): throw ValidationError("--path and --clear exclude each other")
        case (nil, true): return nil
        case (let text?, false):
            let keyPath = try absoluteKeyPath(text)
            guard !keyPath.components.isEmpty else {
                throw ValidationError("the master key (m) cannot be PIN-less: give a path below it, e.g. m/44'/60'/0'/0/0 (--clear unsets the PIN-less path)")
            }
            return keyPath
        }
    }

    func run() throws {
        let keyPath = try keyPath()
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            keyPath == nil ? ["PIN-less path cleared: every signature needs the PIN"]
                : ["PIN-less path set to \(result.text("pinless_path")): keyhost card sign --pinless signs with its key, without PIN"]
        }) { connection in
            try connection.requirePinless("set-pinless-path")
            try connection.open(.pinVerified)
            return try connection.setPinlessPath(keyPath)
        }
    }
}
