import ArgumentParser
// FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostRecord
import KeyhostServices

/// `keyhost card satochip …`: a Satochip (in a reader, or the software one with --reader virtual --card-state FILE).
struct CardSatochip: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "satochip",
        abstract: "Use a Satochip: set it up, PINs, seed, label, authenticity.",
        discussion: """
            Every command takes the card options (--reader, --card-state, --trusted-ca, --pin-env) and --json. The \
            software Satochip is made by 'keyhost card satochip setup --reader virtual --card-state FILE'. Secrets (PIN, \
            PUK, mnemonic) come from KEYHOST_* environment variables or a prompt without echo, never from the command \
            line. Signing with a set-up, seeded Satochip is done by the commands that take --card (key xpub, key \
            sign-message, psbt sign).
            """,
        subcommands: [SatochipSetup.self, SatochipStatusCommand.self, SatochipVerifyPIN.self, SatochipChangePIN.self,
                      SatochipUnblockPIN.self, SatochipImportSeed.self, SatochipResetSeed.self, SatochipLabel.self,
                      SatochipCertificateCommand.self]
    )
}

/// Runs one Satochip command: open the card, do `body`, print its result (JSON with `--json`, else `human`), close it.
/// A software card's state file must exist unless the command `creates` the card.
func runSatochipCommand(_ options: CardOptions, json: Bool, creates: Bool = false, human: (Record) -> [String],
                        _ body: (SatochipConnection) throws -> Record) throws {
    try Failure.exitOnError {
        let request = try options.request()
        if !creates, let state = request.state, !FileManager.default.fileExists(atPath: state) {
            throw Failure.kind("not_found", "no software card state at \(state); create a software Satochip with "
                               + "keyhost card satochip setup --reader virtual --card-state \(state)")
        }
        let connection = try SatochipConnection.open(request, readers: [PCSCReaders()], frontEnd: options.frontEnd())
        defer { connection.close() }
        let result = try body(connection)
        if json {
            print(result.json())
        } else {
            for line in human(result) { print(TerminalText.escaped(line)) }  // labels come from the card
        }
    }
}
