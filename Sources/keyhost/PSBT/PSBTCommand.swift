import ArgumentParser
import KeyhostServices
import KeyhostBitcoin
import KeyhostFiles

/// `keyhost psbt …`: inspect, sign and finalize Partially Signed Bitcoin Transactions.
struct PSBTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "psbt",
        abstract: "Inspect, sign, combine and finalize PSBTs (BIP174 v0, BIP370 v2, taproot BIP371).",
        discussion: """
            FILE is a PSBT in binary or base64, or - for standard input. Signed and finalized PSBTs are written in \
            the form they were read in (-o OUT), or as base64 on standard output. Keys come as for every command that \
            takes one: a mnemonic from KEYHOST_MNEMONIC (or the variable --mnemonic-env names; on a terminal, else a \
            prompt), never from the command line, with the passphrase of KEYHOST_PASSPHRASE when it is set \
            (--passphrase-env VAR, --passphrase-prompt, --no-passphrase); or a Keycard with --card (PIN from \
            KEYHOST_PIN or a prompt; --reader virtual --card-state FILE for a software card). keyhost signs the \
            inputs whose BIP32 origins name that master key's fingerprint. docs/json.md shows the --json output.
            """,
        subcommands: [PSBTInspect.self, PSBTSign.self, PSBTCombine.self, PSBTFinalize.self]
    )

    /// Largest PSBT file read: room for a full block's worth of previous transactions.
    static let inputLimit = 32 * BoundedFile.mebibyte

    /// The PSBT in FILE (or standard input for "-"), and whether it was base64 text.
    static func read(_ path: String) throws -> (psbt: PSBT, base64: Bool) {
        let bytes = path == "-" ? try BoundedFile.readStandardInput(limit: inputLimit) : try BoundedFile.read(path, limit: inputLimit)
        do {
            return (try PSBT.parse(data: bytes, maxSize: inputLimit), !bytes.starts(with: PSBT.magic))
        } catch let error as PSBTError {
            throw PSBTError(error.kind, "\(path == "-" ? "standard input" : path): \(error.message)", offset: error.offset,
                            input: error.input, output: error.output)
        }
    }

    /// Writes `psbt` to `output` in the form the input had (binary or base64), or base64 to standard output.
    static func write(_ psbt: PSBT, to output: String?, base64: Bool) throws {
        guard let output, output != "-" else { print(psbt.base64); return }
        try OutputFile.create(output, base64 ? Array((psbt.base64 + "\n").utf8) : psbt.serialized())
    }

}
