import KeyhostRecord
import KeyhostEthereum
import LuaRuntime

/// An Ethereum failure as Lua sees it: a table with `kind` (`invalid_transaction`, `invalid_rlp`,
/// `invalid_typed_data`, `invalid_json`), `message`, and `field` or `offset` when known; `tostring` is the message.
/// Built from field names, offsets and fixed text; transactions and documents hold no secrets.
struct EthLuaError: LuaErrorConvertible, CustomStringConvertible {
    let kind: String
    let description: String
    let field: String?
    let offset: Int?

    var luaErrorFields: LuaTable {
        LuaTable([
            "kind": .text(kind),
            "field": field.map { .text($0) } ?? .nil,
            "offset": offset.map { .integer(Int64($0)) } ?? .nil,
        ])
    }
}

/// Runs `body`, turning the domain module's errors into structured Lua errors.
func ethCall<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch {
        switch error {
        case let error as TransactionError:
            throw EthLuaError(kind: error.kind, description: error.description, field: error.fieldName, offset: error.offset)
        case let error as RLPError: throw EthLuaError(kind: error.kind, description: error.description, field: nil, offset: error.offset)
        case let error as TypedDataError: throw EthLuaError(kind: error.kind, description: error.description, field: nil, offset: nil)
        case let error as JSONError: throw EthLuaError(kind: error.kind, description: error.description, field: nil, offset: error.offset)
        case let error as EthHexError: throw EthLuaError(kind: "invalid_transaction", description: "raw transaction \(error)", field: nil, offset: nil)
        default: throw error
        }
    }
}
