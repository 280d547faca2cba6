import KeyhostCard
import KeyhostCrypto
import KeyhostServices
import LuaRuntime

/// `keyhost.card.signer`: a card of any family opened for signing (`card.signer{}`, or `s:signer()` of a Keycard
/// session), with the methods every family shares: `info`, `public_key`, `xpub`, `sign`, `sign_schnorr`. Wherever a
/// card session signs (`psbt:sign`, `tx:sign`, `discovery.scan{card = }`, token wallets), a signer does too.
final class CardSignerObject: LuaObject {
    private(set) var card: SigningCard?

    init(card: SigningCard) { self.card = card }

    static let luaTypeName = "keyhost.card.signer"

    /// The card, or an error once closed.
    func live() throws -> SigningCard {
        guard let card else { throw BindingError("\(Self.luaTypeName) is closed") }
        return card
    }

    var luaDescription: String {
        guard let card else { return "\(Self.luaTypeName) (closed)" }
        return "\(Self.luaTypeName)(\(card.signer.profile.name), reader \(card.readerName))"
    }

    func luaClose() {
        card?.close()
        card = nil
    }

    /// A method whose card errors become structured errors naming `command`.
    private static func method(_ command: String?, _ body: @escaping (SigningCard, LuaContext) throws -> Int32) -> LuaMethod<CardSignerObject> {
        { object, ctx in
            let card = try object.live()
            return try cardCall(command) { try body(card, ctx) }
        }
    }

    /// `path` (argument or option) as indexes from the master; relative paths are refused (a signer has no current key).
    static func path(_ text: String, argument: Int32) throws -> [UInt32] {
        let path: DerivationPath
        do { path = try DerivationPath(text) } catch { throw LuaArgumentError(argument, "path \(text.prefix(80).debugDescription): \(error)") }
        guard path.isAbsolute else { throw LuaArgumentError(argument, "path \(text.prefix(80).debugDescription) must start at the master key (m/…)") }
        return path.indexes
    }

    static let luaMethods: [String: LuaMethod<CardSignerObject>] = [
        "info": method(nil) { card, ctx in
            let profile = card.signer.profile
            let abilities = profile.abilities
            return try ctx.return(.table(LuaTable([
                "family": .text(profile.family), "version": .text(profile.version), "reader": .text(card.readerName),
                "abilities": .table(LuaTable([
                    "extended_keys": .boolean(abilities.contains(.extendedKeys)),
                    "master_extended_key": .boolean(abilities.contains(.masterExtendedKey)),
                    "ecdsa": .boolean(abilities.contains(.ecdsa)), "schnorr": .boolean(abilities.contains(.schnorr)),
                ])),
            ])))
        },
        "public_key": method("EXPORT KEY") { card, ctx in
            let path = try path(try ctx.string(2), argument: 2)
            ctx.push(bytes: try CardExtendedKey.exportedKey(card.signer, components: path).compressed)
            return 1
        },
        "xpub": method("EXPORT KEY") { card, ctx in
            let path = try path(try ctx.string(2), argument: 2)
            let opts = try Options(ctx, 3, allowed: ["family"])
            var family = ExtendedKeyVersion.xpub
            if let name = try opts.string("family") {
                guard let found = ExtendedKeyVersion.lookup(prefix: name), found.publicPrefix == name else {
                    throw LuaArgumentError(3, "option 'family': unknown extended public key family \"\(name)\" (xpub, ypub, zpub, tpub, ...)")
                }
                family = found
            }
            let signer = card.signer
            let node = try CardExtendedKey.node(signer, components: path) { try CardExtendedKey.exportedKey(signer, components: $0) }
            ctx.push(node.extendedPublicKey(family))
            return 1
        },
        "sign": method("SIGN") { card, ctx in
            let digest = try ctx.bytes(2)
            guard digest.count == 32 else { throw LuaArgumentError(2, "digest of \(digest.count) bytes; a signature is over a 32-byte hash") }
            let opts = try Options(ctx, 3, allowed: ["path"])
            guard let text = try opts.string("path") else { throw LuaArgumentError(3, "option 'path' is required: the key's path from the master, e.g. \"m/84'/0'/0'/0/0\"") }
            let path = try path(text, argument: 3)
            try card.signer.check(.signECDSA, path: path)
            let signed = try card.signer.signECDSA(digest: digest, at: path)
            guard case .table(var table) = Signatures.table(signed.signature) else { return 0 }
            table["public_key"] = .string(signed.publicKey.compressed)
            return try ctx.return(.table(table))
        },
        "sign_schnorr": method("SIGN") { card, ctx in
            let digest = try ctx.bytes(2)
            guard digest.count == 32 else { throw LuaArgumentError(2, "digest of \(digest.count) bytes; a BIP340 signature here is over a 32-byte hash") }
            let opts = try Options(ctx, 3, allowed: ["path"])
            guard let text = try opts.string("path") else { throw LuaArgumentError(3, "option 'path' is required: the key's path from the master") }
            let path = try path(text, argument: 3)
            try card.signer.check(.signSchnorr, path: path)
            let signed = try card.signer.signSchnorr(digest: digest, at: path, taproot: nil)
            return try ctx.return(.table(LuaTable([
                "signature": .string(signed.signature), "public_key": .string(signed.publicKey.compressed),
                "x_only": .string(signed.publicKey.xOnly.bytes),
            ])))
        },
    ]
}

/// A card given in an options table (`{card = …}`): a Keycard session or a signer of any family.
enum CardArgument {
    case session(CardSessionObject)
    case signer(CardSignerObject)

    /// The card `reference` holds; `what` names the option in errors.
    static func card(_ ctx: LuaContext, _ reference: LuaReference, what: String) throws -> CardArgument {
        func closed(_ error: LuaError) -> Bool {
            if case .runtime(let message) = error { return message.hasSuffix("is closed") }
            return false
        }
        do { return .signer(try ctx.object(reference, as: CardSignerObject.self, what: what)) } catch let error as LuaError {
            if closed(error) { throw error }
        }
        do { return .session(try ctx.object(reference, as: CardSessionObject.self, what: what)) } catch let error as LuaError {
            if closed(error) { throw error }
            throw LuaError.runtime("\(what) must be a \(CardSessionObject.luaTypeName) (card.open{}) or a \(CardSignerObject.luaTypeName) "
                                   + "(card.signer{}), got \(reference.typeName)")
        }
    }
}
