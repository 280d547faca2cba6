import ArgumentParser
import KeyhostEthereum
import KeyhostCrypto

/// `keyhost eth sign-typed-data FILE.json`.
struct EthSignTypedData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-typed-data",
        abstract: "Sign an EIP-712 document (eth_signTypedData_v4 JSON) and print the 65-byte signature r‖s‖v as 0x-hex."
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
                try printJSON([
                    "signature": hex0x(signature.rsv), "r": hex0x(signature.r), "s": hex0x(signature.s), "v": 27 + signature.recoveryID,
                    "digest": hex0x(digest), "domain_separator": hex0x(try data.domainSeparator()), "primary_type": data.primaryType,
                    "address": address, "warnings": warnings,
                ] as [String: Any])
            } else {
                print(hex0x(signature.rsv))
                for warning in warnings { Failure.writeError("keyhost: warning: \(warning)\n") }
            }
        }
    }
}
