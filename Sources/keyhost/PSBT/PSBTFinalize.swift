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
        discussion: """
            Every input must be signed (or already final): an input that cannot be finalized is an error naming it. \
            With --json, as Bitcoin Core's finalizepsbt: the inputs that can be are finalized, and an incomplete PSBT \
            is still printed: {complete: false, psbt, incomplete: [{input, reason}]} (written with -o, \
            never as a transaction); a complete one is {complete: true, psbt, tx, txid, vsize}.
            Exit status: 0 when the PSBT is complete, 1 when an input is left (in text and JSON alike, as \
            verify-message exits 1 for an invalid signature), 64 for a bad option.
            """
            + "\n" + HelpExamples.text(
                "keyhost psbt finalize signed.psbt --extract   # the transaction as hex, to broadcast",
                "keyhost psbt finalize signed.psbt -o final.psbt",
                "keyhost psbt finalize signed.psbt --json")
    )

    @Argument(help: ArgumentHelp("The PSBT (binary or base64), or - for standard input.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT: the finalized PSBT (in the input's form), or with --extract the transaction as hex.", valueName: "out"))
    var output: String?

    @Flag(help: "Print (or write) the network transaction as hex, ready to broadcast, instead of the finalized PSBT.")
    var extract = false

    @Flag(help: "Print JSON {complete, psbt, tx, txid, vsize} or, when inputs are left, {complete: false, psbt, incomplete}.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            var (psbt, base64) = try PSBTCommand.read(file)
            if json {
                let left = try psbt.finalizeWhatCan()
                if !left.isEmpty {
                    if let output, output != "-", !extract { try PSBTCommand.write(psbt, to: output, base64: base64) }
                    print(Record.object([
                        ("complete", .bool(false)), ("psbt", .string(psbt.base64)),
                        ("incomplete", .array(left.map { .object([("input", .integer(Int64($0.input))), ("reason", .string($0.reason))]) })),
                    ]).json())
                    // Not a finished transaction: the same status as the text form's error, so `&&` never broadcasts.
                    throw ExitCode(1)
                }
            }
            try psbt.finalize()
            let tx = try psbt.extractTransaction()
            let raw = Hex.encode(tx.serialized())
            if json {
                if let output, output != "-" {
                    if extract { try writeText(raw, to: output) } else { try PSBTCommand.write(psbt, to: output, base64: base64) }
                }
                print(Record.object([("complete", .bool(true)), ("psbt", .string(psbt.base64)), ("tx", .string(raw)), ("txid", .string(tx.displayTxid)),
                                     ("vsize", .integer(Int64(tx.virtualSize)))]).json())
                return
            }
            if extract {
                if let output, output != "-" {
                    try writeText(raw, to: output)
                    OutputFile.note("transaction \(tx.displayTxid) (\(tx.virtualSize) vB) into \(output)")
                } else {
                    print(raw)
                }
            } else {
                try PSBTCommand.write(psbt, to: output, base64: base64)
                if let output, output != "-" { OutputFile.note("finalized PSBT into \(output)") }
            }
        }
    }

    private func writeText(_ text: String, to path: String) throws {
        try OutputFile.create(path, text: text + "\n")
    }
}
