import KeyhostRecord
import KeyhostCrypto
import KeyhostEthereum
import LuaRuntime

/// `keyhost.eth`: RLP, signed transactions (legacy EIP-155, EIP-2930, EIP-1559) and EIP-712 typed data.
///
/// Transactions and typed-data documents are tables shaped like their JSON (TX.json, eth_signTypedData_v4);
/// the domain module does the work, this file only converts values. See docs/lua-api.md.
enum EthModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.eth") { module in
            module.function("rlp_encode") { ctx in
                ctx.push(bytes: RLP.encode(try RLPValues.item(try ctx.value(1), position: 1, depth: 0)))
                return 1
            }
            module.function("rlp_decode") { ctx in
                try ctx.return(RLPValues.lua(try RLP.decode(try ctx.bytes(1))))
            }
            module.function("tx") { ctx in
                // JSON text too: keyhost.json turns numbers beyond 64 bits into json.number tables, the text keeps them exact.
                let json: JSONValue
                if ctx.typeName(1) == "string" {
                    json = try JSONValue.parse(try ctx.bytes(1))
                } else {
                    json = try LuaJSON.json(.table(try LuaJSON.table(ctx, 1, what: "transaction")), position: 1, what: "transaction")
                }
                let fields = try TransactionFields(json)
                ctx.push(object: TxObject(fields.transaction))
                return 1
            }
            module.function("decode_tx") { ctx in
                let tx = try EthereumTransaction.decode(raw: try rawBytes(ctx, 1))
                return try ctx.return(LuaJSON.lua(try tx.fields()))
            }
            module.function("typed_data_hash") { ctx in
                ctx.push(bytes: try typedData(ctx, 1).digest())
                return 1
            }
            module.function("sign_typed_data") { ctx in
                let signer = try EthSigner.resolve(ctx, 1, options: 3)
                let data = try typedData(ctx, 2)
                let signature = try signer(try data.digest())
                guard case .table(var result) = Signatures.table(signature) else { return try ctx.return(Signatures.table(signature)) }
                // As the command line: a permit granting someone else's tokens is signed, with a warning.
                let address = try data.recoverAddress(signature)
                result["warnings"] = .table(LuaTable(array: data.grantorsOtherThan(address).map {
                    .text("message.\($0.field) is \($0.address), not the signer \(address): this \(data.primaryType) grants nothing of the signer's, or the document is not what it seems")
                }))
                return try ctx.return(.table(result))
            }
            module.function("recover_typed_data") { ctx in
                let data = try typedData(ctx, 1)
                ctx.push(try data.recoverAddress(try Signatures.recoverable(ctx, 2)))
                return 1
            }
        }
    }

    /// A document as a table, or as JSON text (a string starting with "{").
    static func typedData(_ ctx: LuaContext, _ i: Int32) throws -> TypedData {
        if ctx.typeName(i) == "string" {
            return try TypedData(json: try ctx.bytes(i))
        }
        return try TypedData(try LuaJSON.json(.table(try LuaJSON.table(ctx, i, what: "typed-data")), position: i, what: "typed data"))
    }

    /// Raw transaction bytes, or the same as "0x…" text (a raw transaction never starts with the byte '0').
    static func rawBytes(_ ctx: LuaContext, _ i: Int32) throws -> [UInt8] {
        let raw = try ctx.bytes(i)
        if raw.count >= 2, raw[0] == UInt8(ascii: "0"), raw[1] | 0x20 == UInt8(ascii: "x") {
            do { return try EthHex.decode(String(decoding: raw, as: UTF8.self)) } catch let error as EthHexError {
                throw TransactionError.decode("\(error)")
            }
        }
        return raw
    }
}

// Raised as their StructuredError tables (kind, message, field or offset): RecordLua's default.
extension TransactionError: LuaErrorConvertible {}
extension RLPError: LuaErrorConvertible {}
extension TypedDataError: LuaErrorConvertible {}
extension JSONError: LuaErrorConvertible {}
