import KeyhostRecord
import ArgumentParser
import KeyhostEthereum
import KeyhostCrypto

/// `keyhost eth sign-typed-data FILE.json`.
struct EthSignTypedData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-typed-data",
        abstract: "Sign an EIP-712 document (eth_signTypedData_v4 JSON) and print the 65-byte signature r‖s‖v as 0x-hex.",
        discussion: HelpExamples.text(
                "keyhost eth sign-typed-data permit.json",
                "keyhost eth sign-typed-data permit.json --card --reader virtual --card-state c.json --json")
    )

    @Argument(help: ArgumentHelp("The typed-data document, or - for standard input.", valueName: "file.json"))
    var file: String

    @OptionGroup var key: EthKeyOptions

    @Flag(help: "Print JSON: signature, r, s, v, digest, domain separator and the signer's address.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            let document = try EthCommand.parseJSON(try EthCommand.read(file), what: file == "-" ? "standard input" : file)
            let data: TypedData
            let digest: [UInt8]
            do {
                data = try TypedData(document)
                digest = try data.digest()
            } catch { throw Failure.kind("invalid_typed_data", "\(error)") }
            let signer = try key.signer()
            defer { signer.close() }
            let signature = try signer.sign(digest)
            let address = try data.recoverAddress(signature)
            let warnings = data.grantorsOtherThan(address).map {
                "message.\($0.field) is \($0.address), not the signer \(address): this \(data.primaryType) grants nothing of the signer's, or the document is not what it seems"
            }
            if json {
                print(Record.object([
                    ("signature", .string(hex0x(signature.rsv))), ("r", .string(hex0x(signature.r))), ("s", .string(hex0x(signature.s))),
                    ("v", .count(27 + Int(signature.recoveryID))), ("digest", .string(hex0x(digest))),
                    ("domain_separator", .string(hex0x(try data.domainSeparator()))), ("primary_type", .string(data.primaryType)),
                    ("address", .string(address)), ("warnings", .strings(warnings)),
                ]).json())
            } else {
                print(hex0x(signature.rsv))
                for warning in warnings { Failure.writeError("keyhost: warning: \(warning)\n") }
            }
        }
    }
}
