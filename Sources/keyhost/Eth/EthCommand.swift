import KeyhostRecord
import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostEthereum
import KeyhostFiles

/// `keyhost eth …`: sign Ethereum transactions and EIP-712 typed data with a mnemonic or a Keycard; decode raw transactions.
struct EthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eth",
        abstract: "Sign Ethereum transactions and EIP-712 typed data; decode raw transactions.",
        discussion: """
            Keys come as for every command that takes one: a mnemonic from KEYHOST_MNEMONIC (or the variable \
            --mnemonic-env names; on a terminal, else a prompt), never from the command line, with the passphrase of \
            KEYHOST_PASSPHRASE when it is set (--passphrase-env VAR, --passphrase-prompt, --no-passphrase); or a Keycard \
            with --card (PIN from KEYHOST_PIN or a prompt; --reader virtual --card-state FILE for a software card). \
            TX.json uses the names of keyhost.eth's tables: 'keyhost eth sign-tx --help' lists them.
            """,
        subcommands: [EthSignTx.self, EthSignTypedData.self, EthDecodeTx.self]
    )

    /// Largest TX.json, typed-data document or raw transaction read.
    static let inputLimit = BoundedFile.mebibyte

    /// The bytes of FILE, or standard input for "-".
    static func read(_ path: String) throws -> [UInt8] {
        path == "-" ? try BoundedFile.readStandardInput(limit: inputLimit) : try BoundedFile.read(path, limit: inputLimit)
    }

    static func parseJSON(_ bytes: [UInt8], what: String) throws -> JSONValue {
        do { return try JSONValue.parse(bytes, maxBytes: inputLimit) } catch { throw Failure.kind("invalid_input", "\(what) is not valid JSON: \(error)") }
    }
}
