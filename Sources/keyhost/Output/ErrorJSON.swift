import KeyhostBindings
import KeyhostBitcoin
import KeyhostLedger
import KeyhostPCSC
import KeyhostRecord
import KeyhostServices
import KeyhostTokens
import KeyhostWallet
import LuaRuntime

/// An error as the JSON object `--json` prints on standard error: `{"error": {"kind", "message", …fields}}`.
///
/// The fields are the structured error's own (`sw`, `sw_name`, `retries_left`, `command`, …) under the names
/// Lua sees; byte strings become hex.
enum ErrorJSON {
    static func record(for error: Error) -> Record {
        var fields: [(String, Record)] = []
        switch error {
        case let error as Failure:
            if case .kind(let kind, _) = error { fields.append(("kind", .string(kind))) }
        case let error as LuaError:
            fields.append(("kind", .string(kind(of: error))))
        case let error as PCSCError:
            // The kind card sessions give PC/SC failures in Lua, plus the PC/SC code for scripts to branch on.
            fields.append(("kind", .string("transport")))
            fields.append(("pcsc_code", .string(error.code.name ?? "0x" + String(error.code.rawValue, radix: 16))))
        // The domain errors' own kinds (`unauthorised_transfer`, `double_spend`, …), as Lua sees them.
        case let error as LedgerError:
            fields.append(("kind", .string(error.kind)))
        case let error as TokenError:
            fields.append(("kind", .string(error.kind)))
        case let error as WalletError:
            fields.append(("kind", .string(error.kind)))
        // Card failures: the service's fields, as Lua's error tables carry them.
        case let error as CardServiceError:
            fields += error.fields
        case let error as CardSetupError:
            fields.append(("kind", .string(error.kind)))
        case let error as DescriptorError:
            fields.append(("kind", .string(error.kind.rawValue)))
            if let position = error.position { fields.append(("position", .integer(Int64(position)))) }
        case let error as LuaErrorConvertible:
            if case .object(let extra)? = Record(lua: .table(error.luaErrorFields)) {
                fields += extra.filter { $0.0 != "message" }
            }
        default:
            break
        }
        if !fields.contains(where: { $0.0 == "kind" }) { fields.append(("kind", .string("failed"))) }
        fields.append(("message", .string(String(describing: error))))
        return .object([("error", .object(fields))])
    }

    static func document(for error: Error) -> String { record(for: error).json(pretty: false) }

    static func usage(_ message: String) -> String {
        Record.object([("error", .object([("kind", .string("usage")), ("message", .string(message))]))]).json(pretty: false)
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
