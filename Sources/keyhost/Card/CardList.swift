import KeyhostRecord
import ArgumentParser
import KeyhostCrypto
import KeyhostPCSC
import KeyhostServices

struct CardList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the PC/SC readers and whether a card is in each.",
        discussion: HelpExamples.text(
                "keyhost card list",
                "keyhost card list --json")
    )

    @Flag(help: "Print JSON: an array of {index, name, card_present, atr}.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            let states = try PCSCReaders().readerStates()
            if json {
                print(try CardReaderState.listRecord([PCSCReaders()]).json())
                return
            }
            if states.isEmpty {
                print("no readers")
                return
            }
            for (index, state) in states.enumerated() {
                let card = state.cardPresent == true ? "card present, ATR \(Hex.encode(state.atr ?? []))" : "no card"
                print("\(index): \(TerminalText.escaped(state.name)): \(card)")  // a reader names itself
            }
        }
    }
}
