import ArgumentParser
import KeyhostBitcoin
import KeyhostRecord

/// `keyhost psbt combine FILE FILE…`.
struct PSBTCombine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "combine",
        abstract: "Merge PSBTs of one transaction (signatures from several signers) into one (BIP174 combiner).",
        discussion: "Fields the first PSBT lacks are added from the others; a field in several keeps the first's value."
            + "\n" + HelpExamples.text(
                "keyhost psbt combine tx.psbt signed.psbt -o both.psbt")
    )

    @Argument(help: ArgumentHelp("Two or more PSBTs (binary or base64) of the same transaction; - for standard input.", valueName: "file"))
    var files: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT, a new file (in the first file's form), instead of base64 on standard output.", valueName: "out"))
    var output: String?

    @Flag(help: "Print JSON {psbt, signatures, file}: the combined PSBT and how many partial signatures it holds.")
    var json = false

    func validate() throws {
        if files.count < 2 { throw ValidationError("give at least two PSBTs to combine") }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input (-) can be read once") }
    }

    func run() throws {
        try Failure.exitOnError {
            var (combined, base64) = try PSBTCommand.read(files[0])
            for file in files.dropFirst() {
                do { try combined.combine(try PSBTCommand.read(file).psbt) } catch let error as PSBTError {
                    throw PSBTError(error.kind, "\(file): \(error.message)")
                }
            }
            if let output, output != "-" { try PSBTCommand.write(combined, to: output, base64: base64) }
            let signatures = combined.inputs.reduce(0) { $0 + $1.partialSignatures.count + ($1.value(PSBTInputType.tapKeySig) == nil ? 0 : 1) }
            if json {
                print(Record.object([("psbt", .string(combined.base64)), ("signatures", .integer(signatures)),
                                     ("file", .string(output == "-" ? nil : output))]).json())
            } else if let output, output != "-" {
                OutputFile.note("combined \(files.count) PSBTs (\(signatures) signature\(signatures == 1 ? "" : "s")) into \(output)")
            } else {
                print(combined.base64)
            }
        }
    }
}
