import KeyhostCard
import KeyhostCrypto
import KeyhostDiscovery
import KeyhostEthereum
import KeyhostFiles
import KeyhostHTTP
import KeyhostPCSC
import KeyhostRecord
import KeyhostServices
import KeyhostTokens
import LuaRuntime

/// An error as the JSON object `--json` prints on standard error: `{"error": {"kind", "message", …fields}}`.
///
/// The fields are the structured error's own (`sw`, `sw_name`, `retries_left`, `command`, …) under the names
/// Lua sees; byte strings become hex. Every error the command line meets has a kind of its own (docs/json.md lists
/// them); `failed` is left only for an error of a type no table here knows.
enum ErrorJSON {
    static func record(for error: Error) -> Record {
        var fields: [(String, Record)] = []
        switch error {
        // The domain and service errors (`wrong_pin`, `invalid_psbt`, `double_spend`, …): kind and fields as Lua
        // raises them.
        case let error as StructuredError:
            return .object([("error", error.errorRecord)])
        case let error as Failure:
            if case .kind(let kind, _) = error { fields.append(("kind", .string(kind))) }
        case let error as LuaError:
            fields.append(("kind", .string(kind(of: error))))
        case let error as PCSCError:
            // The kind card sessions give PC/SC failures in Lua, plus the PC/SC code for scripts to branch on.
            fields.append(("kind", .string("transport")))
            fields.append(("pcsc_code", .string(error.code.name ?? "0x" + String(error.code.rawValue, radix: 16))))
        case is KeycardError, is CardChannelError, is SoftKeycardError, is APDUError, is CardSignerError, is CKTapError, is SoftCKTapError:
            // A card error met outside a card service call (a key command's EXPORT KEY): the card's own kinds.
            if let mapped = CardServiceError.from(error, command: nil) as? StructuredError { return .object([("error", mapped.errorRecord)]) }
        default:
            if let kind = domainKind(of: error) { fields.append(("kind", .string(kind))) }
        }
        if !fields.contains(where: { $0.0 == "kind" }) { fields.append(("kind", .string("failed"))) }
        fields.append(("message", .string(String(describing: error))))
        return .object([("error", .object(fields))])
    }

    static func document(for error: Error) -> String { record(for: error).json(pretty: false) }

    static func usage(_ message: String) -> String {
        Record.object([("error", .object([("kind", .string("usage")), ("message", .string(message))]))]).json(pretty: false)
    }

    /// The kinds of the domain errors that are not structured: what was wrong with the input, named by what it was.
    static func domainKind(of error: Error) -> String? {
        switch error {
        case is MnemonicError: return "invalid_mnemonic"
        case is DerivationPathError: return "invalid_path"
        case is AddressError: return "invalid_address"
        case is ExtendedKeyError: return "invalid_key"
        case is KeyError, is SignatureError, is CryptoError: return "crypto"
        case is HexError, is KeyhostCrypto.EncodingError, is EthHexError, is QuantityError: return "invalid_encoding"
        case is CBORError: return "invalid_encoding"
        case is BoundedFile.ReadError: return "io"
        case is DiscoveryError, is DiscoverySetupError: return "discovery"
        case is HTTPTransportError, is ProxyError: return "network"
        case is InterruptedError: return "interrupted"
        default: return nil
        }
    }

    private static func kind(of error: LuaError) -> String {
        switch error {
        case .syntax: return "syntax"
        case .runtime: return "lua_error"
        case .memoryLimit: return "memory_limit"
        case .instructionBudget: return "instruction_limit"
        case .timeLimit: return "time_limit"
        case .interrupted: return "interrupted"
        case .setup: return "setup"
        }
    }
}
