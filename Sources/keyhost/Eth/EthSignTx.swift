import ArgumentParser
import KeyhostEthereum
import KeyhostRecord

/// `keyhost eth sign-tx TX.json`.
struct EthSignTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-tx",
        abstract: "Sign a transaction (legacy EIP-155, EIP-2930 or EIP-1559) and print the raw signed bytes as 0x-hex.",
        discussion: """
            TX.json is one object; its fields are the names of keyhost.eth's tables:
              chain_id, nonce, gas    required: integers
              to                      required: an address ("" or null: a new contract)
              gas_price               legacy (type 0) and EIP-2930 (type 1)
              max_priority_fee_per_gas, max_fee_per_gas   EIP-1559 (type 2)
              value                   optional: wei, default 0
              data                    optional: 0x-hex, default "0x"
              access_list             optional: [{"address", "storage_keys": [...]}]
              type                    optional: 0, 1 or 2; else from the fields
              from                    optional: must be the signer's address
            Quantities are JSON integers, decimal or 0x-hex strings; unknown names, \
            and v/r/s (a signed transaction), are refused. docs/json.md has more. A TX.json:
              {"chain_id": 1, "nonce": 0, "gas": 21000, "value": "1000",
               "to": "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
               "max_priority_fee_per_gas": "1000000000", "max_fee_per_gas": "30000000000"}
            The key: KEYHOST_MNEMONIC (or --mnemonic-env VAR; on a terminal, a prompt), with KEYHOST_PASSPHRASE when \
            set, or --card; --path picks the account (default m/44'/60'/0'/0/0).
            """
            + "\n" + HelpExamples.text(
                "keyhost eth sign-tx tx.json             # 0x02f8…, for eth_sendRawTransaction",
                "keyhost eth sign-tx tx.json --path \"m/44'/60'/0'/0/1\" --json",
                "keyhost eth sign-tx tx.json --card --reader virtual --card-state c.json",
                "keyhost eth sign-tx - --json < tx.json")
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
