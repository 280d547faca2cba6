import KeyhostBitcoin
import KeyhostBitcoinCard
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices
import LuaRuntime

/// `keyhost.psbt`: read, inspect, sign, finalize and extract PSBTs (BIP174 v0, BIP370 v2, BIP371 taproot).
///
/// The domain module (KeyhostBitcoin) does the work; this file resolves signers and converts values.
/// See docs/lua-api.md.
enum PSBTModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.psbt") { module in
            module.function("parse") { ctx in
                ctx.push(object: PSBTObject(try PSBT.parse(data: try ctx.bytes(1))))
                return 1
            }
        }
    }

    /// A signer: a private master `keyhost.hd.node` (depth 0: PSBT origins start at the master) or a card session.
    static func signer(_ ctx: LuaContext, _ i: Int32) throws -> (source: PSBTKeySource, done: () -> Void) {
        switch ctx.typeName(i) {
        case NodeObject.luaTypeName:
            let node = try ctx.object(i, as: NodeObject.self).live()
            return (try HDKeySource(master: node), {})
        case CardSessionObject.luaTypeName:
            let session = try ctx.object(i, as: CardSessionObject.self)
            let card = try session.live()
            let source = try cardCall("EXPORT KEY") { try PSBTCardKeySource(card: card) }
            return (source, { session.noteChannel(card) })
        case CardSignerObject.luaTypeName:
            let signer = try ctx.object(i, as: CardSignerObject.self).live().signer
            return (try cardCall("EXPORT KEY") { try PSBTCardKeySource(signer: signer) }, {})
        default:
            throw LuaArgumentError(i, "\(NodeObject.luaTypeName) (the master, from hd.from_mnemonic or hd.from_seed), \(CardSessionObject.luaTypeName) "
                                   + "or \(CardSignerObject.luaTypeName) expected, got \(ctx.typeName(i))")
        }
    }
}

/// `keyhost.psbt` objects: one PSBT, changed in place by `sign` and `finalize`.
final class PSBTObject: LuaObject {
    var psbt: PSBT
    init(_ psbt: PSBT) { self.psbt = psbt }

    static let luaTypeName = "keyhost.psbt"

    static let luaMethods: [String: LuaMethod<PSBTObject>] = [
        "serialize": { object, ctx in
            ctx.push(bytes: object.psbt.serialized())
            return 1
        },
        "base64": { object, ctx in
            ctx.push(object.psbt.base64)
            return 1
        },
        "version": { object, ctx in
            ctx.push(Int64(object.psbt.version))
            return 1
        },
        // Once every input is final, the network transaction's id; before, the unsigned transaction's,
        // which a scriptSig (P2PKH, P2SH-wrapped inputs) still changes.
        "txid": { object, ctx in
            let tx = object.psbt.isFinalized ? try object.psbt.extractTransaction() : try object.psbt.unsignedTransaction()
            ctx.push(tx.displayTxid)
            return 1
        },
        "inspect": { object, ctx in
            var signer: (source: PSBTKeySource, done: () -> Void)? = nil
            var optionsAt: Int32 = 2
            if ctx.typeName(2) != "table" && ctx.typeName(2) != "nil" && ctx.typeName(2) != "no value" {
                signer = try PSBTModule.signer(ctx, 2)
                optionsAt = 3
            }
            defer { signer?.done() }
            let coin = try Options(ctx, optionsAt, allowed: ["coin"]).coin() ?? .bitcoin
            let summary = try object.psbt.summary(coin: coin, signer: signer?.source)
            return try ctx.return(LuaValue(record: PSBTRecords.summary(summary, signer: signer?.source)))
        },
        "sign": { object, ctx in
            let (source, done) = try PSBTModule.signer(ctx, 2)
            defer { done() }
            let options = try Options(ctx, 3, allowed: ["allow_witness_utxo", "sighash"])
            var signing = PSBTSigningOptions(allowWitnessUTXOOnly: try options.boolean("allow_witness_utxo") ?? false)
            if let name = try options.string("sighash") {
                guard let type = SighashType(name: name) else {
                    throw LuaArgumentError(3, "option 'sighash': unknown type \"\(name)\"; use ALL, NONE, SINGLE (optionally |ANYONECANPAY) or DEFAULT")
                }
                signing.sighashType = type
            }
            // Card failures (PIN, transport) become the card module's structured errors; PSBT ones stay PSBT errors.
            let report = try source is PSBTCardKeySource
                ? cardCall("SIGN") { try object.psbt.sign(with: source, options: signing) }
                : object.psbt.sign(with: source, options: signing)
            return try ctx.return(LuaValue(record: PSBTRecords.signing(report)))
        },
        "finalize": { object, ctx in
            try object.psbt.finalize()
            // The same userdata back (not a new one), so p:finalize() == p and calls chain.
            return try ctx.return(try ctx.value(1))
        },
        "combine": { object, ctx in
            let other = try ctx.object(2, as: PSBTObject.self)
            try object.psbt.combine(other.psbt)
            return try ctx.return(try ctx.value(1))
        },
        "is_finalized": { object, ctx in
            ctx.push(object.psbt.isFinalized)
            return 1
        },
        "extract": { object, ctx in
            ctx.push(bytes: try object.psbt.extractTransaction().serialized())
            return 1
        },
    ]

    var luaDescription: String {
        "\(Self.luaTypeName)(v\(psbt.version), \(psbt.inputs.count) inputs, \(psbt.outputs.count) outputs\(psbt.isFinalized ? ", finalized" : ""))"
    }
}

/// A PSBT failure as Lua sees it: a table with `kind` (`invalid_psbt`, `invalid_transaction`, `psbt_signing`,
/// `psbt_finalize`), `message`, and `input`, `output` or `offset` when known; `tostring` is the message.
extension PSBTError: LuaErrorConvertible {}
