import KeyhostRecord
import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostPCSC
import KeyhostServices

struct CardList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the PC/SC readers, whether a card is in each, and which applets it holds (Keycard, Satochip, …).",
        discussion: HelpExamples.text(
                "keyhost card list",
                "keyhost card list --json")
    )

    @Flag(help: "Print JSON: an array of {index, name, card_present, atr, applets: [{family, version, state}], problem}.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            // Each card present is probed with SELECTs only (no secret, nothing changed), over a shared connection.
            let record = try CardReaderState.listRecord([PCSCReaders()], identify: true)
            if json {
                print(record.json())
                return
            }
            guard case .array(let readers) = record, !readers.isEmpty else {
                print("no readers")
                return
            }
            for (index, reader) in readers.enumerated() {
                var card = reader["card_present"] == .bool(true) ? "card present, ATR \(reader.text("atr"))" : "no card"
                if case .array(let applets)? = reader["applets"] {
                    let names = applets.map { "\(CardFamily(rawValue: $0.text("family")).map { "\($0)" } ?? $0.text("family")) \($0.text("version")) (\($0.text("state")))" }
                    card += names.isEmpty ? "; no applet keyhost knows" : "; " + names.joined(separator: ", ")
                } else if reader["problem"] != nil && reader["problem"] != .null {
                    card += "; unreadable: \(reader.text("problem"))"
                }
                print("\(index): \(TerminalText.escaped(reader.text("name"))): \(card)")  // a reader names itself
            }
        }
    }
}
