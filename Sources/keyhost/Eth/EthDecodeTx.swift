import KeyhostRecord
import ArgumentParser
import KeyhostEthereum
import KeyhostFiles
import KeyhostCrypto

/// `keyhost eth decode-tx RAW`.
struct EthDecodeTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode-tx",
        abstract: "Decode a raw signed transaction and recover its sender.",
        discussion: HelpExamples.text(
                "keyhost eth decode-tx \"$(keyhost eth sign-tx tx.json)\"",
                "keyhost eth sign-tx tx.json | keyhost eth decode-tx - --json")
    )

    @Argument(help: ArgumentHelp("The raw transaction as 0x-hex, or - to read it from standard input.", valueName: "raw"))
    var raw: String

    @Flag(help: "Print the fields as JSON.")
    var json = false

    func validate() throws {
        if raw != "-" && !(raw.hasPrefix("0x") || raw.hasPrefix("0X")) { throw ValidationError("RAW must be 0x-hex (or - for standard input)") }
    }

    func run() throws {
        try Failure.exitOnError {
            var text = raw
            if raw == "-" {
                text = String(decoding: try BoundedFile.readStandardInput(limit: 2 * EthCommand.inputLimit + 16), as: UTF8.self)
                    .trimmingWhitespaceAndNewlines()
            }
            let fields: JSONValue
            let bytes: [UInt8]
            do { bytes = try EthHex.decode(text) } catch { throw Failure.kind("invalid_transaction", "the raw transaction \(error)") }
            do { fields = try EthereumTransaction.decode(raw: bytes).fields() } catch { throw Failure.kind("invalid_transaction", "\(error)") }
            if json {
                print(Record(json: fields).json())
            } else if case .object(let members) = fields {
                for member in members {
                    switch member.value {
                    case .array: print("\(member.key): \(member.value.rendered)")
                    case .string(let s): print("\(member.key): \(s)")
                    default: print("\(member.key): \(member.value.rendered)")
                    }
                }
            }
        }
    }
}
