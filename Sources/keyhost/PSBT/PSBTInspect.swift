import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// `keyhost psbt inspect FILE`.
struct PSBTInspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a PSBT's inputs, outputs with addresses, amounts, fee, and warnings.",
        discussion: "With a key source (KEYHOST_MNEMONIC, --mnemonic-env VAR or --card), inputs it can sign and outputs paying back to it (change) are marked."
            + "\n" + HelpExamples.text(
                "keyhost psbt inspect tx.psbt --coin test",
                "keyhost psbt inspect tx.psbt --coin test --json --no-passphrase")
    )

    @Argument(help: ArgumentHelp("The PSBT (binary or base64), or - for standard input.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The coin whose addresses to show: btc, test (testnet and signet), regtest, ltc, ….", valueName: "coin"))
    var coin = "btc"

    @OptionGroup var keys: PSBTKeyOptions

    @Flag(help: "Print a JSON object {version, unsigned_txid, locktime, inputs, outputs, total_in, total_out, fee, fee_rate, warnings, master_fingerprint}.")
    var json = false

    func validate() throws {
        guard Coin.named(coin) != nil else { throw ValidationError("--coin \(coin): unknown coin; use btc, test, regtest, ltc, tltc, doge, dash, bch") }
    }

    func run() throws {
        try Failure.exitOnError {
            let (psbt, _) = try PSBTCommand.read(file)
            let opened = try keys.open(required: false)
            defer { opened?.connection?.close() }
            let summary = try psbt.summary(coin: Coin.named(coin) ?? .bitcoin, signer: opened?.source)
            if json {
                print(PSBTRecords.summary(summary, signer: opened?.source).json())
                return
            }
            print("PSBT version \(summary.version), unsigned transaction \(summary.txid), lock time \(summary.lockTime)")
            print("inputs (\(summary.inputs.count)):")
            for input in summary.inputs {
                var notes = [String]()
                if input.ours { notes.append("ours") }
                if input.finalized { notes.append("finalized") } else if input.signatures > 0 { notes.append("\(input.signatures) signature\(input.signatures == 1 ? "" : "s")") }
                if let sighash = input.sighash { notes.append("sighash \(sighash)") }
                print("  \(input.index)  \(input.scriptType.padding(12))  \((input.address ?? "\(input.txid(short: true)):\(input.previousIndex)").padding(44))  \(input.amount.map(btc) ?? "amount unknown")\(notes.isEmpty ? "" : "  " + notes.joined(separator: ", "))")
            }
            print("outputs (\(summary.outputs.count)):")
            for output in summary.outputs {
                print("  \(output.index)  \(output.scriptType.padding(12))  \((output.address ?? "(no address)").padding(44))  \(btc(output.amount))\(output.change ? "  change" : "")")
            }
            var totals = "total out \(btc(summary.totalOut))"
            if let totalIn = summary.totalIn { totals = "total in \(btc(totalIn)), " + totals }
            if let fee = summary.fee { totals += ", fee \(fee) sat" + (summary.feeRate.map { " (about \(CFormat.fixed($0, digits: 1)) sat/vB)" } ?? "") }
            print(totals)
            for warning in summary.warnings { print("warning: \(warning)") }
        }
    }
}

/// Satoshis as BTC with all eight decimals (exact: integer arithmetic, no floating point).
func btc(_ sat: UInt64) -> String {
    let fraction = String(sat % 100_000_000)
    return "\(sat / 100_000_000).\(String(repeating: "0", count: 8 - fraction.count))\(fraction) BTC"
}

private extension PSBTSummary.Input {
    func txid(short: Bool) -> String { short ? String(previousTxid.prefix(16)) + "…" : previousTxid }
}
