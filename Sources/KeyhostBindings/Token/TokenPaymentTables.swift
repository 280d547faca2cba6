import KeyhostCrypto
import KeyhostLedger
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import LuaRuntime

/// Payments as Lua sees them (docs/payments.md): requests, chains, payments and fraud proofs as tables
/// of raw-byte fields, and the arguments that name issuers, tokens and armoured texts.
enum PaymentTables {
    /// A request's fields, `signature_valid`, and its armoured text.
    static func request(_ request: PaymentRequest) -> LuaTable {
        var table = LuaTable([
            "id": .string(request.id),
            "amount": TokenTables.amount(request.amount),
            "unit": .text(request.unit),
            "issuers": .table(LuaTable(array: request.issuers.map { .string($0.bytes) })),
            "keys": .table(LuaTable(array: request.keys.map { .string($0.compressed) })),
            "expires": .integer(request.expires),
            "payee": .string(request.payee.compressed),
            "signature_valid": .boolean(request.signatureIsValid),
            "armored": .text(request.armored),
        ])
        if let memo = request.memo { table["memo"] = .text(memo) }
        if let created = request.created { table["created"] = .integer(created) }
        return table
    }

    /// A chain: the token, each link, who holds it now, whether it is a deposit, and the `khchain1:` text.
    static func chain(_ chain: TokenChain) -> LuaTable {
        let t = chain.token.token
        return LuaTable([
            "token_id": .string(t.id),
            "token": .table(TokenTables.token(chain.token)),
            "value": TokenTables.amount(t.value),
            "unit": .text(t.unit),
            "issuer": .string(t.issuer.bytes),
            "holder": .string(chain.currentHolder.compressed),
            "links": .table(LuaTable(array: chain.transfers.map { link in
                .table(LuaTable([
                    "index": .integer(Int64(link.index)), "to": .string(link.to.compressed), "time": .integer(link.time),
                    "args": RecordConversion.lua(link.arguments), "receipt_id": .string(link.receipt), "signature": .string(link.signature),
                ]))
            })),
            "is_deposit": .boolean(chain.isDeposit),
            "armored": .text(chain.armored),
        ])
    }

    /// A payment: the request it answers, the total, and each chain.
    static func payment(_ payment: Payment) -> LuaTable {
        LuaTable([
            "request_id": .string(payment.requestID),
            "amount": TokenTables.amount(payment.chains.reduce(UInt64(0)) { $0 &+ $1.token.token.value }),
            "chains": .table(LuaTable(array: payment.chains.map { .table(chain($0)) })),
            "armored": .text(payment.armored),
        ])
    }

    /// `{valid, key, token_id, position, issuer}` for a proof that holds; `{valid = false, problem}` otherwise.
    static func proofReport(_ proof: FraudProof, bytecodeAllowed: Bool, runner: (RunRequest) -> RunOutcome) -> LuaTable {
        do {
            let signer = try proof.verify(bytecodeAllowed: bytecodeAllowed, runner: runner)
            return LuaTable([
                "valid": .boolean(true), "key": .string(signer.compressed), "token_id": .string(proof.token.token.id),
                "position": .integer(Int64(proof.common.count)), "issuer": .string(proof.token.token.issuer.bytes),
            ])
        } catch {
            return LuaTable(["valid": .boolean(false), "token_id": .string(proof.token.token.id), "problem": .text("\(error)")])
        }
    }
}

enum PaymentArguments {
    /// Armoured text (a string), or a table from the parse functions (its `armored` field).
    static func text(_ ctx: LuaContext, _ i: Int32, what: String) throws -> [UInt8] {
        switch ctx.typeName(i) {
        case "string": return try ctx.bytes(i)
        case "table":
            guard case .string(let text) = try ctx.table(i)["armored"] else {
                throw LuaArgumentError(i, "a \(what) table has an 'armored' field (as the parse functions return)")
            }
            return text
        default: throw LuaArgumentError(i, "armoured \(what) text expected, got \(ctx.typeName(i))")
        }
    }

    static func request(_ ctx: LuaContext, _ i: Int32) throws -> PaymentRequest {
        let text = try text(ctx, i, what: "request ('khreq1:…')")
        return try tokenCall { try PaymentRequest(armored: text, source: "request") }
    }

    static func payment(_ ctx: LuaContext, _ i: Int32) throws -> Payment {
        let text = try text(ctx, i, what: "payment ('khpay1:…')")
        return try tokenCall { try Payment(armored: text, source: "payment") }
    }

    /// An issuer's x-only key from a list entry: 32 raw bytes, 64 hex digits, a 33-byte key (or 66 hex
    /// digits), or a key object or hd node.
    static func issuer(_ value: LuaValue, _ ctx: LuaContext, position: Int32, what: String) throws -> XOnlyPublicKey {
        switch value {
        case .string(var bytes):
            if (bytes.count == 64 || bytes.count == 66), TokenArguments.isHex(bytes) {
                bytes = (try? Hex.decode(String(decoding: bytes, as: UTF8.self))) ?? bytes
            }
            if bytes.count == 32, let key = try? XOnlyPublicKey(bytes: bytes) { return key }
            if bytes.count == 33, let key = try? PublicKey(bytes: bytes) { return key.xOnly }
            throw LuaArgumentError(position, "\(what) must be an issuer's x-only public key (32 bytes or 64 hex digits) or a 33-byte key")
        case .reference(let ref):
            if let object = try? ctx.object(ref, as: PrivateKeyObject.self, what: what) { return try object.live().publicKey.xOnly }
            if let node = try? ctx.object(ref, as: NodeObject.self, what: what) { return try node.live().publicKey.xOnly }
            throw LuaArgumentError(position, "\(what) must be an issuer's public key (32 bytes or hex), or a key object or hd node")
        default:
            throw LuaArgumentError(position, "\(what) must be an issuer's public key (32 bytes or hex), got \(value.typeName)")
        }
    }

    /// A list of strings (ids, armoured chains) at `i`; a single string counts as a list of one.
    static func strings(_ ctx: LuaContext, _ i: Int32, what: String) throws -> [[UInt8]] {
        if ctx.typeName(i) == "string" { return [try ctx.bytes(i)] }
        guard ctx.typeName(i) == "table" else { throw LuaArgumentError(i, "a list of \(what) expected, got \(ctx.typeName(i))") }
        let table = try ctx.table(i)
        guard table.fields.isEmpty else { throw LuaArgumentError(i, "a list of \(what) expected (no named fields)") }
        return try table.array.enumerated().map { n, value in
            guard case .string(let bytes) = value else {
                throw LuaArgumentError(i, "entry \(n + 1) must be a string (\(what)), got \(value.typeName)")
            }
            return bytes
        }
    }
}
