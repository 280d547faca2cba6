import ArgumentParser
import KeyhostPCSC

/// `keyhost card …`: smart cards through PC/SC, and a software Keycard served to the virtual reader.
struct CardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: "Use a Keycard (PC/SC reader or the software card): set it up, pair, PINs, keys, signatures.",
        discussion: """
            Every command takes --reader (a name, a number from 'keyhost card list', or 'virtual' with --card-state FILE \
            for the software card) and --json (one object whose names are the Lua result tables'; errors as \
            {"error": {"kind", "message", …}} on standard error). Secrets (PIN, PUK, passwords, mnemonic) come from \
            KEYHOST_* environment variables or a prompt without echo, never from the command line.
            """,
        subcommands: [CardServe.self, CardList.self, CardInfo.self, CardStatus.self, CardInit.self, CardPair.self, CardUnpair.self,
                      CardVerifyPIN.self, CardChangePIN.self, CardChangePUK.self, CardChangePairingPassword.self, CardUnblockPIN.self,
                      CardLoadSeed.self, CardGenerateKey.self, CardGenerateMnemonic.self, CardExportKey.self, CardSign.self,
                      CardFactoryReset.self]
    )
}

/// Options every command that connects to a card shares.
struct ReaderOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The reader: its exact name, or its number in 'keyhost card list'. Default: the first reader with a card.", valueName: "reader"))
    var reader: String?

    @Option(name: .long, help: ArgumentHelp("Wait up to this many seconds for a card to appear.", valueName: "seconds"))
    var wait: Double?

    @Flag(help: "Connect in exclusive mode: other applications wait until keyhost is done.")
    var exclusive = false

    @Option(name: .customLong("protocol"), help: ArgumentHelp("Transmission protocol: t0, t1 or any.", valueName: "protocol"))
    var transmissionProtocol: String = "any"

    var protocols: PCSCProtocols {
        switch transmissionProtocol.lowercased() {
        case "t0", "t=0": return .t0
        case "t1", "t=1": return .t1
        default: return .any
        }
    }

    func validate() throws {
        guard ["t0", "t=0", "t1", "t=1", "any"].contains(transmissionProtocol.lowercased()) else {
            throw ValidationError("--protocol must be t0, t1 or any")
        }
        if let wait, !(wait >= 0) { throw ValidationError("--wait needs a number of seconds, 0 or more") }
    }

    /// Connects to the chosen card (waiting for it with --wait).
    func connect(_ context: PCSCContext) throws -> PCSCCard {
        let mode: PCSCShareMode = exclusive ? .exclusive : .shared
        var name = reader
        if let reader, let index = Int(reader), !(try context.readers().contains(reader)) {
            let names = try context.readers()
            guard names.indices.contains(index) else {
                return try context.connect(index: index, mode: mode, protocols: protocols)  // throws "no such reader"
            }
            name = names[index]
        }
        if let wait {
            name = try context.waitForCard(reader: name, timeout: wait)
        }
        if let name { return try context.connect(reader: name, mode: mode, protocols: protocols) }
        return try context.connectFirstCard(mode: mode, protocols: protocols)
    }
}
