import KeyhostCard
import KeyhostCrypto
import KeyhostLedger
import KeyhostPlayer
import KeyhostRecord
import KeyhostServices
import KeyhostTokens
import KeyhostWallet
import LuaRuntime

/// A token or wallet failure as Lua sees it: a table with `kind` and `message`, whose `tostring` is the
/// message. Kinds are those of `WalletError` and `TokenError` (`already_spent`, `expired`, `not_found`,
/// `signature`, `untrusted_bytecode`, `program`, …) plus the card-binding ones (`card_required`,
/// `wrong_card`, `wrong_key`). Messages are built from ids, keys and fixed text, never from secrets.
public struct TokenBindingError: Error, LuaErrorConvertible, CustomStringConvertible {
    public let kind: String
    public let message: String
    /// The position of the chain a ledger refused, in the list the script gave (from 1).
    public let index: Int?

    public init(kind: String, _ message: String, index: Int? = nil) {
        self.kind = kind
        self.message = message
        self.index = index
    }

    public var description: String { message }
    public var luaErrorFields: LuaTable {
        var fields = LuaTable(["kind": .text(kind)])
        if let index { fields["index"] = .integer(Int64(index)) }
        return fields
    }
}

/// Runs `body`, turning a token record that does not convert into a structured Lua error. Wallet, token, ledger
/// and proof-file errors are StructuredErrors and raise their own tables (kind, message, fields) as they are.
func tokenCall<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch let error as RecordConversion.Failure {
        throw TokenBindingError(kind: "invalid", error.description)
    }
}

// Raised as their StructuredError tables (RecordLua's default): the same kind, message and fields as --json.
extension WalletError: LuaErrorConvertible {}
extension TokenError: LuaErrorConvertible {}
extension LedgerError: LuaErrorConvertible {}
extension ProofFileError: LuaErrorConvertible {}

enum TokenTables {
    /// An unsigned amount: an integer, or its decimal text above 2^63-1 (as the program sees it).
    static func amount(_ value: UInt64) -> LuaValue { LuaValue(record: .unsigned(value)) }

    /// A token's fields (the names `token inspect --json` prints, bytes as raw strings), with what only Lua
    /// gets: the program itself, the armoured token, and `meta` as the Lua value it was issued from.
    static func token(_ signed: SignedToken) -> LuaTable { table(Record(token: signed), signed) }

    /// A stored token: its fields, `signature_valid`, and where it is in its life.
    static func stored(_ stored: StoredToken) -> LuaTable { table(Record(storedToken: stored), stored.token) }

    private static func table(_ record: Record, _ signed: SignedToken) -> LuaTable {
        guard case .table(var table) = LuaValue(record: record) else { return LuaTable() }
        table["program"] = .string(signed.token.program.code)
        table["armored"] = .text(TokenArmor.armor(signed))
        table["meta"] = signed.token.metadata.map(RecordConversion.lua) ?? .nil
        return table
    }

    /// A receipt verification report.
    static func report(_ report: ReceiptVerifier.Report, _ receipt: SignedReceipt) -> LuaTable {
        LuaTable([
            "valid": .boolean(report.isValid),
            "issuer_signature_valid": .boolean(report.issuerSignatureValid),
            "holder_signature_valid": .boolean(report.holderSignatureValid),
            "effects_match": report.effectsMatch.map { .boolean($0) } ?? .nil,
            "problems": .table(LuaTable(array: report.problems.map { .text($0) })),
            "token_id": .string(receipt.receipt.token.token.id),
            "receipt_id": .string(receipt.id),
            "now": .integer(receipt.receipt.now),
            "effects": .table(LuaTable(array: receipt.receipt.effects.map(RecordConversion.lua))),
        ])
    }
}

enum TokenArguments {
    static func isHex(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }
    }

    /// The token an id argument names in `store`: 32 raw bytes, or hex (the full 64 digits, or a unique
    /// prefix of at least 4). A 32-byte string that is all hex digits is tried as raw bytes first.
    static func storedToken(_ ctx: LuaContext, _ i: Int32, in store: TokenStore) throws -> StoredToken {
        guard ctx.typeName(i) == "string" else { throw LuaArgumentError(i, "token id expected (32 bytes or hex), got \(ctx.typeName(i))") }
        return try storedToken(try ctx.bytes(i), i, in: store)
    }

    /// The token `bytes` names in `store` (as above); `i` is the argument blamed when it names none.
    static func storedToken(_ bytes: [UInt8], _ i: Int32, in store: TokenStore) throws -> StoredToken {
        if bytes.count == 32, let found = try tokenCall({ try store.token(id: bytes) }) { return found }
        guard isHex(bytes) else {
            throw LuaArgumentError(i, bytes.count == 32
                ? "no token with this id in the wallet"
                : "a token id is 32 bytes, or hex (at least 4 digits), got \(bytes.count) bytes that are not hex")
        }
        return try tokenCall { try store.find(idPrefix: String(decoding: bytes, as: UTF8.self)) }
    }

    /// A 33-byte holder key: raw bytes, 66 hex digits, or a key object or hd node.
    static func holder(_ value: LuaValue, _ ctx: LuaContext, position: Int32) throws -> PublicKey {
        switch value {
        case .string(var bytes):
            if bytes.count == 66, isHex(bytes) { bytes = (try? Hex.decode(String(decoding: bytes, as: UTF8.self))) ?? bytes }
            guard bytes.count == 33, let key = try? PublicKey(bytes: bytes) else {
                throw LuaArgumentError(position, "option 'to' must be the holder's compressed public key (33 bytes, or 66 hex digits)")
            }
            return key
        case .reference(let ref):
            if let object = try? ctx.object(ref, as: PrivateKeyObject.self, what: "option 'to'") { return try object.live().publicKey }
            if let node = try? ctx.object(ref, as: NodeObject.self, what: "option 'to'") { return try node.live().publicKey }
            throw LuaArgumentError(position, "option 'to' must be the holder's public key (33 bytes or hex), or an open key object or hd node")
        default:
            throw LuaArgumentError(position, "option 'to' must be the holder's public key (33 bytes or hex), got \(value.typeName)")
        }
    }

    /// An issuer's x-only key: 32 raw bytes, 64 hex digits, a 33-byte key, or a key object or hd node.
    static func issuer(_ ctx: LuaContext, _ i: Int32) throws -> [UInt8] {
        if ctx.typeName(i) == "string" {
            var bytes = try ctx.bytes(i)
            if bytes.count == 64, isHex(bytes) { bytes = (try? Hex.decode(String(decoding: bytes, as: UTF8.self))) ?? bytes }
            if bytes.count == 33, let key = try? PublicKey(bytes: bytes) { return key.xOnly.bytes }
            guard bytes.count == 32, (try? XOnlyPublicKey(bytes: bytes)) != nil else {
                throw LuaArgumentError(i, "an issuer is a 32-byte x-only public key (raw or 64 hex digits)")
            }
            return bytes
        }
        return try KeyArguments.xOnlyKey(ctx, i).bytes
    }

    /// Run arguments given as a value inside another table (`{id = …, args = {…}}` in a batch), as `runArguments`.
    static func runArguments(_ value: LuaValue, position: Int32, path: String) throws -> CBORValue {
        if value.isNil { return .map([]) }
        let converted: CBORValue
        do { converted = try RecordConversion.cbor(value, path: path) } catch let error as RecordConversion.Failure {
            throw LuaArgumentError(position, error.description)
        }
        switch converted {
        case .map: return converted
        case .array(let items): return .map(items.enumerated().map { CBORPair(.int(Int64($0.offset + 1)), $0.element) })
        default: throw LuaArgumentError(position, "\(path) must be a table, got \(value.typeName)")
        }
    }

    /// Run arguments: a Lua table as a CBOR map (strings: text when UTF-8, else bytes; integers, booleans,
    /// nested tables). Floats are refused. A list becomes a map with integer keys 1…n.
    static func runArguments(_ ctx: LuaContext, _ i: Int32) throws -> CBORValue {
        if ctx.isNil(i) { return .map([]) }
        guard ctx.typeName(i) == "table" else { throw LuaArgumentError(i, "arguments must be a table, got \(ctx.typeName(i))") }
        let converted: CBORValue
        do { converted = try RecordConversion.cbor(try ctx.value(i), path: "args") } catch let error as RecordConversion.Failure {
            throw LuaArgumentError(i, error.description)
        }
        switch converted {
        case .array(let items): return .map(items.enumerated().map { CBORPair(.int(Int64($0.offset + 1)), $0.element) })
        default: return converted
        }
    }

    /// Text given to parse: an armoured token, a file's contents, or a token table (its `armored` field).
    static func tokenText(_ ctx: LuaContext, _ i: Int32) throws -> [UInt8] {
        switch ctx.typeName(i) {
        case "string": return try ctx.bytes(i)
        case "table":
            guard case .string(let text) = try ctx.table(i)["armored"] else {
                throw LuaArgumentError(i, "a token table has an 'armored' field (as token.parse returns)")
            }
            return text
        default: throw LuaArgumentError(i, "armoured token text ('khtok1:…') or a token table expected, got \(ctx.typeName(i))")
        }
    }
}
