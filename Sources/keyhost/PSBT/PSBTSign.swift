import ArgumentParser
import KeyhostBitcoin
import KeyhostRecord
import KeyhostServices

/// `keyhost psbt sign FILE`.
struct PSBTSign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign every input a key of the mnemonic or card can sign; write the PSBT with the signatures.",
        discussion: """
            Inputs are matched through their BIP32 origins (master fingerprint and path). Segwit v0 inputs need \
            non_witness_utxo (the previous transaction) so the amount is proven; --allow-witness-utxo accepts \
            witness_utxo alone. An input naming a sighash type is signed with that type; --sighash TYPE asks for one \
            and refuses inputs that name another.
            """
            + "\n" + HelpExamples.text(
                "keyhost psbt sign tx.psbt -o signed.psbt             # keys from KEYHOST_MNEMONIC (and KEYHOST_PASSPHRASE)",
                "keyhost psbt sign tx.psbt --card --reader virtual --card-state c.json --json")
    )

    @Argument(help: ArgumentHelp("The PSBT (binary or base64), or - for standard input.", valueName: "file"))
    var file: String

    @OptionGroup var keys: PSBTKeyOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the signed PSBT to OUT (in the input's form) instead of base64 on standard output.", valueName: "out"))
    var output: String?

    @Flag(help: "Sign segwit v0 inputs whose amount only witness_utxo states (not proven by the previous transaction).")
    var allowWitnessUtxo = false

    @Option(help: ArgumentHelp("Sighash type: ALL, NONE, SINGLE, ALL|ANYONECANPAY, … or DEFAULT (taproot); default the input's, else ALL/DEFAULT.", valueName: "type"))
    var sighash: String?

    @Flag(help: "Print JSON {psbt, complete, signatures, signed, skipped, apdus} instead of the PSBT.")
    var json = false

    func validate() throws {
        if let sighash, SighashType(name: sighash) == nil {
            throw ValidationError("--sighash \(sighash): unknown type; use ALL, NONE, SINGLE (optionally |ANYONECANPAY) or DEFAULT")
        }
    }

    func run() throws {
        try Failure.exitOnError {
            var (psbt, base64) = try PSBTCommand.read(file)
            guard let (source, connection) = try keys.open(required: true) else { return }
            defer { connection?.close() }
            let before = connection?.apduCount ?? 0
            let report = try psbt.sign(with: source, options: PSBTSigningOptions(allowWitnessUTXOOnly: allowWitnessUtxo,
                                                                                  sighashType: sighash.flatMap(SighashType.init(name:))))
            if report.signatures.isEmpty {
                throw Failure.kind("nothing_signed", "no input was signed: " + report.skipped.map { "input \($0.input): \($0.reason)" }.joined(separator: "; "))
            }
            // Whether every input can now be finalized, as walletprocesspsbt's and HWI's `complete`.
            var trial = psbt
            let complete = (try? trial.finalizeWhatCan().isEmpty) ?? false
            if json {
                guard case .object(var fields) = PSBTRecords.signing(report) else { return }
                fields.append(("complete", .bool(complete)))
                fields.append(("psbt", .string(psbt.base64)))
                fields.append(("apdus", connection.map { .integer(Int64($0.apduCount - before)) } ?? .null))
                if let output, output != "-" { try PSBTCommand.write(psbt, to: output, base64: base64) }
                print(Record.object(fields).json())
                return
            }
            try PSBTCommand.write(psbt, to: output, base64: base64)
            let inputs = Set(report.signatures.map(\.input)).count
            var note = "signed \(inputs) of \(psbt.inputs.count) inputs\(output.map { $0 == "-" ? "" : " into \($0)" } ?? "")"
            note += complete ? "; the PSBT is complete\n" : "; more signatures are needed before it can be finalized\n"
            for (input, reason) in report.skipped { note += "  input \(input) not signed: \(reason)\n" }
            OutputFile.note(String(note.dropLast()))
        }
    }
}
