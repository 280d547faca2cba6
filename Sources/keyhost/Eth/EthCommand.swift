import ArgumentParser
import Foundation
import KeyhostBindings
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
            Keys come from --mnemonic-env VAR (the phrase from that environment variable, never from the command line) \
            or from a Keycard with --card (PIN from KEYHOST_PIN or a prompt; --reader virtual --card-state FILE for a \
            software card). TX.json uses the names of keyhost.eth's tables; docs/json.md shows them.
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

/// Where the signing key comes from: a mnemonic in the environment or a card, and the derivation path.
struct EthKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the BIP39 mnemonic from environment variable VAR.", valueName: "var"))
    var mnemonicEnv: String?

    @Option(help: ArgumentHelp("With --mnemonic-env: read the BIP39 passphrase from environment variable VAR.", valueName: "var"))
    var passphraseEnv: String?

    @Flag(help: "Sign with a Keycard (PIN from KEYHOST_PIN, else a prompt).")
    var card = false

    @Option(help: ArgumentHelp("With --card: the reader's name (or a unique part), its number in 'keyhost card list', or 'virtual'.", valueName: "reader"))
    var reader: String?

    @Option(help: ArgumentHelp("With --reader virtual: the software card's state file.", valueName: "file"))
    var cardState: String?

    @Option(help: ArgumentHelp("The derivation path of the signing key.", valueName: "path"))
    var path = "m/44'/60'/0'/0/0"

    func validate() throws {
        if card == (mnemonicEnv != nil) {
            throw ValidationError(card ? "give one key source: --card or --mnemonic-env VAR, not both" : "give a key source: --mnemonic-env VAR or --card")
        }
        if !card && (reader != nil || cardState != nil) { throw ValidationError("--reader and --card-state go with --card") }
        if cardState != nil && reader?.lowercased() != "virtual" { throw ValidationError("--card-state goes with --reader virtual") }
        if passphraseEnv != nil && mnemonicEnv == nil { throw ValidationError("--passphrase-env goes with --mnemonic-env") }
        do { _ = try DerivationPath(path) } catch { throw ValidationError("--path \(path): \(error)") }
    }

    /// A signer for 32-byte digests; `close` releases the card. The address is the signer's, for output and checks.
    func signer() throws -> EthDigestSigner {
        if let mnemonicEnv {
            let phrase = try environmentValue(mnemonicEnv, what: "the mnemonic")
            let mnemonic: Mnemonic
            do { mnemonic = try Mnemonic(phrase: phrase) } catch {
                throw Failure.message("the mnemonic in \(mnemonicEnv) is not a valid BIP39 phrase (\(Discover.redacted(error, phrase)))")
            }
            let passphrase = try passphraseEnv.map { try environmentValue($0, what: "the BIP39 passphrase") } ?? ""
            let node = try HDNode(seed: mnemonic.seed(passphrase: passphrase)).derive(path)
            guard let key = node.privateKey else { throw Failure.message("the derived node has no private key") }
            return EthDigestSigner(sign: { try key.signRecoverable(digest: $0) }, close: {})
        }
        let connection = try CardConnection(reader: reader, cardState: cardState, readers: [PCSCReaders()], pin: nil, pairingPassword: nil,
                                            virtualHint: "--card --reader virtual --card-state FILE")
        let keyPath: KeyPath
        do { keyPath = try KeyPath(path) } catch {
            connection.close()
            throw Failure.kind("usage", "--path \(path): \(error)")
        }
        return EthDigestSigner(sign: { digest in try connection.card.sign(digest: digest, mode: .derive(keyPath)).signature },
                               close: { connection.close() })
    }

    private func environmentValue(_ variable: String, what: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw Failure.message("the environment variable \(variable) (\(what)) is not set or empty; export \(variable)=...")
        }
        return value
    }
}

struct EthDigestSigner {
    let sign: ([UInt8]) throws -> RecoverableSignature
    let close: () -> Void
}

/// JSON values printed with the CLI's usual formatting (sorted keys, pretty); numbers are 64-bit here by construction.
func foundationJSON(_ value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let b): return b
    case .number(let text): return Int64(text).map { $0 as Any } ?? text
    case .string(let s): return s
    case .array(let items): return items.map(foundationJSON)
    case .object(let members): return Dictionary(members.map { ($0.key, foundationJSON($0.value)) }, uniquingKeysWith: { a, _ in a })
    }
}

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
                try printJSON(foundationJSON(.object(members)))
            } else {
                print(raw)
            }
        }
    }
}

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
            if json {
                try printJSON([
                    "signature": hex0x(signature.rsv), "r": hex0x(signature.r), "s": hex0x(signature.s), "v": 27 + signature.recoveryID,
                    "digest": hex0x(digest), "domain_separator": hex0x(try data.domainSeparator()), "primary_type": data.primaryType,
                    "address": address,
                ] as [String: Any])
            } else {
                print(hex0x(signature.rsv))
            }
        }
    }
}

struct EthDecodeTx: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode-tx",
        abstract: "Decode a raw signed transaction and recover its sender."
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
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let fields: JSONValue
            do {
                let bytes = try EthHex.decode(text)
                fields = try EthereumTransaction.decode(raw: bytes).fields()
            } catch { throw Failure.kind("invalid_transaction", "\(error)") }
            if json {
                try printJSON(foundationJSON(fields))
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
