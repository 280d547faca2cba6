import ArgumentParser
import KeyhostEthereum
import KeyhostRecord

/// `keyhost eth sign-tx TX.json`.
struct EthSignTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-tx",
        abstract: "Sign a transaction (legacy EIP-155, EIP-2930 or EIP-1559) and print the raw signed bytes as 0x-hex."
    )

    @Argument(help: ArgumentHelp("The transaction as JSON, or - for standard input.", valueName: "tx.json"))
    var file: String

    @OptionGroup var key: EthKeyOptions

    @Flag(help: "Print JSON: the raw transaction with its fields, hash, from, v, r and s.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            let document = try EthCommand.parseJSON(try EthCommand.read(file), what: file == "-" ? "standard input" : file)
            let fields: TransactionFields
            do { fields = try TransactionFields(document) } catch { throw Failure.kind("invalid_transaction", "\(error)") }
            if fields.transaction.signature != nil {
                throw Failure.kind("invalid_transaction", "the transaction already carries a signature (v, r, s); remove them to sign it again")
            }
            let signer = try key.signer()
            defer { signer.close() }
            let signed = try fields.transaction.signed(by: signer.sign)
            do { try fields.check(signed) } catch { throw Failure.kind("wrong_signer", "\(error)") }
            let raw = hex0x(try signed.serialized())
            if json {
                guard case .object(var members) = try signed.fields() else { return }
                members.insert(.init("raw", .string(raw)), at: 0)
                print(Record(json: .object(members)).json())
            } else {
                print(raw)
            }
        }
    }
}
