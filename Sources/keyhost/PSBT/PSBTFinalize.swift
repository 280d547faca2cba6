import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostRecord
import KeyhostFiles

/// `keyhost psbt finalize FILE`.
struct PSBTFinalize: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finalize",
        abstract: "Build each input's final scriptSig/witness from its signatures; with --extract, print the network transaction.",
        discussion: "Every input must be signed (or already final): an input that cannot be finalized is an error naming it."
    )

    @Argument(help: ArgumentHelp("The PSBT (binary or base64), or - for standard input.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT: the finalized PSBT (in the input's form), or with --extract the transaction as hex.", valueName: "out"))
    var output: String?

    @Flag(help: "Print (or write) the network transaction as hex, ready to broadcast, instead of the finalized PSBT.")
    var extract = false

    @Flag(help: "Print JSON {psbt, tx, txid, vsize}.")
    var json = false

    func run() throws {
        try PSBTCommand.run {
            var (psbt, base64) = try PSBTCommand.read(file)
            try psbt.finalize()
            let tx = try psbt.extractTransaction()
            let raw = Hex.encode(tx.serialized())
            if json {
                if let output, output != "-" {
                    if extract { try writeText(raw, to: output) } else { try PSBTCommand.write(psbt, to: output, base64: base64) }
                }
                print(Record.object([("psbt", .string(psbt.base64)), ("tx", .string(raw)), ("txid", .string(tx.displayTxid)),
                                     ("vsize", .integer(Int64(tx.virtualSize)))]).json())
                return
            }
            if extract {
                if let output, output != "-" { try writeText(raw, to: output) } else { print(raw) }
            } else {
                try PSBTCommand.write(psbt, to: output, base64: base64)
            }
        }
    }

    private func writeText(_ text: String, to path: String) throws {
        do { try AtomicFile.write(Array((text + "\n").utf8), to: path) } catch let error as AtomicFile.WriteError {
            throw Failure.kind("write_failed", "cannot write \(path): \(error.problem)")
        }
    }
}
