import KeyhostCard
import KeyhostCrypto
import KeyhostEthereum
import KeyhostServices
import LuaRuntime

/// What signs a 32-byte digest for `tx:sign`, `eth.sign_typed_data` and the signed-message functions of `keyhost.ec`.
enum EthSigner {
    /// A private key (32 bytes, `keyhost.ec.private_key`, private `keyhost.hd.node`), a card session (`{path = "m/…"}`
    /// in the options at `options`, else the card's current key), or a Lua function(digest) returning a signature.
    /// `extra`: the caller's own options, allowed beside `path`.
    static func resolve(_ ctx: LuaContext, _ i: Int32, options: Int32, extra: [String] = []) throws -> ([UInt8]) throws -> RecoverableSignature {
        switch ctx.typeName(i) {
        case CardSessionObject.luaTypeName:
            let session = try ctx.object(i, as: CardSessionObject.self)
            let path = try Options(ctx, options, allowed: ["path"] + extra).string("path")
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
        case CardSignerObject.luaTypeName:
            let card = try ctx.object(i, as: CardSignerObject.self).live()
            guard let text = try Options(ctx, options, allowed: ["path"] + extra).string("path") else {
                throw LuaArgumentError(options, "option 'path' is required with a \(CardSignerObject.luaTypeName): the key's path, e.g. \"m/44'/60'/0'/0/0\"")
            }
            let path = try CardSignerObject.path(text, argument: options)
            try cardCall(nil) { try card.signer.check(.signECDSA, path: path) }
            return { digest in try cardCall("SIGN") { try card.signer.signECDSA(digest: digest, at: path) }.signature }
        case "function":
            _ = try Options(ctx, options, allowed: extra)
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
                _ = try Options(ctx, options, allowed: extra)
                let key = try KeyArguments.privateKey(ctx, i)
                return { try key.signRecoverable(digest: $0) }
            }
            throw LuaArgumentError(i, "\(KeyArguments.privateForms), \(CardSessionObject.luaTypeName), \(CardSignerObject.luaTypeName) or signer function "
                                   + "expected, got \(ctx.typeName(i))")
        }
    }
}
