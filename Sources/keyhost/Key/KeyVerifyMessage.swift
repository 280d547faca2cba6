import KeyhostRecord
import ArgumentParser
// Base64 (Data) from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCrypto

/// `keyhost key verify-message ADDRESS SIGNATURE MESSAGE`: exit 0 when the signature is ADDRESS's, 1 when not,
/// 64 when the address or signature is malformed.
struct KeyVerifyMessage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-message",
        abstract: "Check a signed message: exit 0 when valid, 1 when not, 64 when the address or signature is malformed.",
        discussion: """
            A 0x address takes an EIP-191 (personal_sign) signature: 65 bytes r‖s‖v as hex, 0x optional. Any other address \
            takes a Bitcoin signed-message signature in base64 (Core's headers and BIP137's for segwit kinds); the coin \
            comes from the address (or --coin). The verdict is one line on standard output.
            --json prints {valid, address, coin} (and recovered_address for Ethereum).
            """
            + "\n" + HelpExamples.text(
                "keyhost key verify-message 0x9858EfFD232B4033E47d90003D41EC34EcaEda94 \"$(keyhost key sign-message --coin eth hello)\" hello",
                "keyhost key verify-message bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu \"$(keyhost key sign-message hi)\" hi --json")
    )

    @Argument(help: ArgumentHelp("The signer's address (Bitcoin-like or 0x Ethereum).", valueName: "address"))
    var address: String

    @Argument(help: ArgumentHelp("The signature: base64 (Bitcoin) or 0x-hex of 65 bytes (Ethereum).", valueName: "signature"))
    var signature: String

    @OptionGroup var message: MessageOptions

    @Option(help: ArgumentHelp("The address's coin (default: the one whose address format it has).", valueName: "coin"))
    var coin: String?

    @Flag(help: "Print a JSON object {valid, address, coin, recovered_address}.")
    var json = false

    /// The checked inputs: which scheme, the coin, and the parsed signature.
    enum Plan {
        case ethereum(RecoverableSignature, Coin)
        case bitcoin(Coin)
    }

    func validate() throws {
        _ = try plan()
    }

    func plan() throws -> Plan {
        try SecretArguments.refuse([("the address", address)])
        let explicit = try KeyTarget.coin(coin)
        let isEthereum = address.hasPrefix("0x") || address.hasPrefix("0X")
        if isEthereum {
            if let explicit, !explicit.addressKinds.contains(.ethereum) {
                throw ValidationError("\(address.prefix(48)) is an Ethereum address, not a \(explicit.name) one")
            }
            do { _ = try EthereumAddress.decode(address) } catch { throw ValidationError("the address: \(error)") }
            var text = signature.trimmingWhitespaceAndNewlines()
            if text.hasPrefix("0x") || text.hasPrefix("0X") { text = String(text.dropFirst(2)) }
            guard text.count == 130, let bytes = try? Hex.decode(text) else {
                throw ValidationError("the signature must be 65 bytes r‖s‖v as 130 hex digits (0x optional), as personal_sign returns; got \(signature.count) characters")
            }
            do { return .ethereum(try RecoverableSignature(rsv: bytes), explicit ?? .ethereum) } catch { throw ValidationError("the signature: \(error)") }
        }
        let coin = try explicit ?? Self.coin(of: address)
        let decoded: DecodedAddress
        do { decoded = try Address.decode(address, coin: coin) } catch { throw ValidationError("the address: \(error)") }
        switch decoded.type {
        case .p2pkh, .p2sh, .p2wpkh: break
        default:
            throw ValidationError("\(decoded.type) addresses have no legacy signed-message format (BIP322 is not supported); "
                + "only p2pkh, p2sh-p2wpkh and p2wpkh addresses can be checked")
        }
        guard signature.count <= InputLimit.base64Signature, let data = Data(base64Encoded: signature.trimmingWhitespaceAndNewlines()),
              data.count == 65 else {
            throw ValidationError("the signature must be base64 of 65 bytes (88 characters), as Bitcoin Core's signmessage writes it")
        }
        let header = Int(data[data.startIndex])
        guard (27...42).contains(header) else {
            throw ValidationError("the signature's header byte is \(header); Bitcoin signed messages use 27 to 42")
        }
        do { _ = try RecoverableSignature(compact: Array(data.dropFirst()), recoveryID: (header - 27) % 4) } catch {
            throw ValidationError("the signature: \(error)")
        }
        return .bitcoin(coin)
    }

    /// The first registry coin (mainnets first) whose address format `text` has; btc's error when none.
    static func coin(of text: String) throws -> Coin {
        for coin in Coin.all where !coin.addressKinds.contains(.ethereum) {
            if Address.isValid(text, coin: coin) { return coin }
        }
        do { _ = try Address.decode(text, coin: .bitcoin) } catch { throw ValidationError("the address: \(error)") }
        return .bitcoin
    }

    func run() throws {
        try Failure.exitOnError {
            let plan = try plan()
            let bytes = try message.bytes()
            var out: Record = ["address": .string(address)]
            let valid: Bool
            switch plan {
            case .ethereum(let signature, let coin):
                out = out.setting("coin", .string(coin.symbol))
                do {
                    let recovered = EthereumAddress.address(of: try signature.recoverPublicKey(digest: EthereumMessage.hash(bytes)))
                    out = out.setting("recovered_address", .string(recovered))
                    valid = recovered.lowercased() == address.lowercased()
                } catch SignatureError.recoveryFailed {
                    valid = false
                }
            case .bitcoin(let coin):
                out = out.setting("coin", .string(coin.symbol))
                do {
                    valid = try BitcoinMessage.verify(bytes, signature: signature.trimmingWhitespaceAndNewlines(), address: address, coin: coin)
                } catch SignatureError.recoveryFailed {
                    valid = false  // well-formed, but made by no key for this message
                }
            }
            out = out.setting("valid", .bool(valid))
            if json {
                print(out.json())
            } else if valid {
                print("valid: the message was signed by \(address)")
            } else {
                let recovered = (out["recovered_address"].flatMap { if case .string(let s) = $0 { s } else { nil } }).map { " (it recovers to \($0))" } ?? ""
                print("invalid: the signature is not \(address)'s for this message\(recovered)")
            }
            if !valid { throw ExitCode(1) }
        }
    }
}
