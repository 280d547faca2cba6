import KeyhostCrypto
import KeyhostEthereum
import LuaRuntime

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
