import KeyhostCard
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
                    guard ctx.typeName(1) == "table" else { throw LuaArgumentError(1, "transaction table or JSON text expected, got \(ctx.typeName(1))") }
                    json = try LuaJSON.json(try ctx.value(1), position: 1, what: "transaction")
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
                return try ctx.return(Signatures.table(try signer(try data.digest())))
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
        guard ctx.typeName(i) == "table" else { throw LuaArgumentError(i, "typed-data table or JSON text expected, got \(ctx.typeName(i))") }
        return try TypedData(try LuaJSON.json(try ctx.value(i), position: i, what: "typed data"))
    }

    /// Raw transaction bytes, or the same as "0x…" text (a raw transaction never starts with the byte '0').
    static func rawBytes(_ ctx: LuaContext, _ i: Int32) throws -> [UInt8] {
        let raw = try ctx.bytes(i)
        if raw.count >= 2, raw[0] == UInt8(ascii: "0"), raw[1] | 0x20 == UInt8(ascii: "x") {
            return try EthHex.decode(String(decoding: raw, as: UTF8.self))
        }
        return raw
    }
}

/// `keyhost.eth.tx`: an immutable transaction; `tx:sign(…)` returns a new, signed one.
final class TxObject: LuaObject {
    let tx: EthereumTransaction
    init(_ tx: EthereumTransaction) { self.tx = tx }

    static let luaTypeName = "keyhost.eth.tx"

    static let luaMethods: [String: LuaMethod<TxObject>] = [
        "signing_hash": { object, ctx in
            ctx.push(bytes: object.tx.signingHash)
            return 1
        },
        "hash": { object, ctx in
            guard object.tx.signature != nil else {
                throw BindingError("the transaction is not signed, so it has no hash yet; tx:signing_hash() is the digest to sign, tx:sign(key) signs")
            }
            ctx.push(bytes: try object.tx.hash())
            return 1
        },
        "serialize": { object, ctx in
            guard object.tx.signature != nil else { throw BindingError("the transaction is not signed; sign it with tx:sign(key) before serializing") }
            ctx.push(bytes: try object.tx.serialized())
            return 1
        },
        "sign": { object, ctx in
            let signer = try EthSigner.resolve(ctx, 2, options: 3)
            ctx.push(object: TxObject(try object.tx.signed(by: signer)))
            return 1
        },
        "sender": { object, ctx in
            ctx.push(EthereumAddress.checksummed(try object.tx.sender()))
            return 1
        },
        "fields": { object, ctx in
            try ctx.return(LuaJSON.lua(try object.tx.fields()))
        },
    ]

    var luaDescription: String {
        "\(Self.luaTypeName)(type \(tx.kind.rawValue), nonce \(tx.nonce), \(tx.signature == nil ? "unsigned" : "signed"))"
    }
}

/// What signs a 32-byte digest for `tx:sign` and `eth.sign_typed_data`.
enum EthSigner {
    /// A private key (32 bytes, `keyhost.ec.private_key`, private `keyhost.hd.node`), a card session (`{path = "m/…"}`
    /// in the options at `options`, else the card's current key), or a Lua function(digest) returning a signature.
    static func resolve(_ ctx: LuaContext, _ i: Int32, options: Int32) throws -> ([UInt8]) throws -> RecoverableSignature {
        switch ctx.typeName(i) {
        case CardSessionObject.luaTypeName:
            let session = try ctx.object(i, as: CardSessionObject.self)
            let path = try Options(ctx, options, allowed: ["path"]).string("path")
            let mode: SignMode
            if let path {
                do { mode = .derive(try KeyPath(path)) } catch { throw LuaArgumentError(options, "option 'path': \(error)") }
            } else {
                mode = .current
            }
            return { digest in
                let card = try session.live()
                defer { session.noteChannel(card) }
                return try cardCall("SIGN") { try card.sign(digest: digest, mode: mode) }.signature
            }
        case "function":
            _ = try Options(ctx, options, allowed: [])
            let function = try ctx.function(i)
            return { digest in
                let results = try ctx.call(function, [.string(digest)])
                switch results.first ?? .nil {
                case .string(let rsv): return try RecoverableSignature(rsv: rsv)
                case .table(let table):
                    if case .string(let rsv) = table["rsv"] { return try RecoverableSignature(rsv: rsv) }
                    throw BindingError("the signer function returned a table without 'rsv'; return what keyhost.ec.sign or s:sign returns")
                default:
                    throw BindingError("the signer function returned \((results.first ?? .nil).typeName); return a signature table or 65 bytes r..s..v")
                }
            }
        default:
            if ctx.typeName(i) == "string" || ctx.typeName(i) == PrivateKeyObject.luaTypeName || ctx.typeName(i) == NodeObject.luaTypeName {
                _ = try Options(ctx, options, allowed: [])
                let key = try KeyArguments.privateKey(ctx, i)
                return { try key.signRecoverable(digest: $0) }
            }
            throw LuaArgumentError(i, "\(KeyArguments.privateForms), \(CardSessionObject.luaTypeName) or signer function expected, got \(ctx.typeName(i))")
        }
    }
}

/// Lua values ↔ the JSON shape transactions and typed data are read from.
enum LuaJSON {
    static let maxDepth = 64

    static func json(_ value: LuaValue, position: Int32, what: String, path: String = "", depth: Int = 0) throws -> JSONValue {
        let at = path.isEmpty ? what : path
        guard depth <= maxDepth else { throw LuaArgumentError(position, "\(at): tables nest deeper than \(maxDepth) levels") }
        switch value {
        case .nil: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let n): return .number(String(n))
        case .number(let d):
            if let n = Int64(exactly: d) { return .number(String(n)) }
            throw LuaArgumentError(position, "\(at) is \(d), not an integer; write large or exact values as decimal strings")
        case .string(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw LuaArgumentError(position, "\(at) is a byte string that is not UTF-8 text; write bytes as 0x-hex text")
            }
            return .string(text)
        case .table(let table):
            if table.fields.isEmpty {
                return .array(try table.array.enumerated().map { i, item in
                    try json(item, position: position, what: what, path: "\(at)[\(i + 1)]", depth: depth + 1)
                })
            }
            guard table.array.isEmpty else { throw LuaArgumentError(position, "\(at) mixes a list and named fields; use one or the other") }
            var members = [JSONValue.Member]()
            for (key, item) in table.fields.sorted(by: { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }) {
                guard case .string = key, let name = key.stringValue else {
                    throw LuaArgumentError(position, "\(at) has a key of type \(key.typeName); use names (or a list 1…n)")
                }
                members.append(.init(name, try json(item, position: position, what: what, path: at + "." + name, depth: depth + 1)))
            }
            return .object(members)
        case .reference(let ref):
            throw LuaArgumentError(position, "\(at) is a \(ref.typeName); only strings, numbers, booleans and tables can be given")
        }
    }

    /// JSON numbers become Lua integers when they fit, else stay decimal strings.
    static func lua(_ value: JSONValue) -> LuaValue {
        switch value {
        case .null: return .nil
        case .bool(let b): return .boolean(b)
        case .number(let text): return Int64(text).map(LuaValue.integer) ?? .text(text)
        case .string(let s): return .text(s)
        case .array(let items): return .table(LuaTable(array: items.map(lua)))
        case .object(let members):
            var table = LuaTable()
            for member in members { table[member.key] = lua(member.value) }
            return .table(table)
        }
    }
}

/// Lua values ↔ RLP items: strings are byte strings, non-negative integers big-endian, tables lists.
enum RLPValues {
    static func item(_ value: LuaValue, position: Int32, depth: Int) throws -> RLPItem {
        guard depth <= RLP.defaultMaxDepth else { throw LuaArgumentError(position, "lists nest deeper than \(RLP.defaultMaxDepth) levels") }
        switch value {
        case .string(let bytes): return .bytes(bytes)
        case .integer(let n):
            guard n >= 0 else { throw LuaArgumentError(position, "RLP integers are 0 or more, got \(n)") }
            return .integer(UInt64(n))
        case .table(let table):
            guard table.fields.isEmpty else { throw LuaArgumentError(position, "an RLP list is a sequence {a, b, …}; it has named fields") }
            return .list(try table.array.map { try item($0, position: position, depth: depth + 1) })
        default:
            throw LuaArgumentError(position, "RLP encodes strings, non-negative integers and lists, got \(value.typeName)")
        }
    }

    static func lua(_ item: RLPItem) -> LuaValue {
        switch item {
        case .bytes(let bytes): return .string(bytes)
        case .list(let items): return .table(LuaTable(array: items.map(lua)))
        }
    }
}
