import KeyhostCrypto
import LuaRuntime

/// `keyhost.ec.private_key`: a secp256k1 private key held in wiped-on-release memory.
final class PrivateKeyObject: LuaObject {
    private var key: PrivateKey?

    init(_ key: PrivateKey) { self.key = key }

    func live() throws -> PrivateKey {
        guard let key else { throw BindingError("\(Self.luaTypeName) is closed") }
        return key
    }

    static let luaTypeName = "keyhost.ec.private_key"

    static let luaMethods: [String: LuaMethod<PrivateKeyObject>] = KeyMethods.common(
        privateKey: { try $0.live() }, publicKey: { try $0.live().publicKey }
    ).merging([
        "bytes": { object, ctx in
            ctx.push(bytes: try object.live().revealedBytes())
            return 1
        },
    ]) { a, _ in a }

    /// Shows the public key only.
    var luaDescription: String {
        guard let key else { return "\(Self.luaTypeName) (closed)" }
        return "\(Self.luaTypeName)(public key \(KeyMethods.shortHex(key.publicKey.compressed)))"
    }

    /// Drops the key; its SecretBytes storage is wiped when released.
    func luaClose() { key = nil }
}

/// `keyhost.hd.node`: a BIP32 extended key with the path it was derived along, when known.
final class NodeObject: LuaObject {
    private var node: HDNode?
    /// The absolute path from the master key, when known (nodes parsed from an xpub above depth 0 have none).
    let path: DerivationPath?
    /// The extended-key family the node (or its ancestor) was parsed from, if it was: it can tell the address kind.
    let parsedFamily: ExtendedKeyVersion?
    /// The extended-key family `xpub()`/`xprv()` use by default: the one it was parsed from, else xpub.
    var family: ExtendedKeyVersion { parsedFamily ?? .xpub }

    init(_ node: HDNode, path: DerivationPath?, parsedFamily: ExtendedKeyVersion? = nil) {
        self.node = node
        self.path = path
        self.parsedFamily = parsedFamily
    }

    func live() throws -> HDNode {
        guard let node else { throw BindingError("\(Self.luaTypeName) is closed") }
        return node
    }

    func privateKey() throws -> PrivateKey {
        guard let key = try live().privateKey else {
            throw BindingError("this \(Self.luaTypeName) is public-only (made from an xpub or with node:public()); "
                               + "signing and private keys need a node derived from a seed, mnemonic or xprv")
        }
        return key
    }

    static let luaTypeName = "keyhost.hd.node"

    static var luaMethods: [String: LuaMethod<NodeObject>] { HDModule.nodeMethods }

    /// Position, fingerprint and whether it is private; never key material.
    var luaDescription: String {
        guard let node else { return "\(Self.luaTypeName) (closed)" }
        let fingerprint = fingerprintHex(node.fingerprint)
        let kind = node.isPrivate ? "private" : "public"
        if let path { return "\(Self.luaTypeName)(\(path), fingerprint \(fingerprint), \(kind))" }
        return "\(Self.luaTypeName)(depth \(node.depth), child \(DerivationPath.format(node.childNumber)), "
            + "fingerprint \(fingerprint), \(kind))"
    }

    /// Drops the node; the private key's SecretBytes storage is wiped when released.
    func luaClose() { node = nil }
}

/// Methods that private keys and HD nodes share, so `key:sign(d)` and `node:sign(d)` behave alike.
enum KeyMethods {
    static func common<T: LuaObject>(privateKey: @escaping (T) throws -> PrivateKey,
                                     publicKey: @escaping (T) throws -> PublicKey) -> [String: LuaMethod<T>] {
        [
            "public_key": { object, ctx in
                let opts = try Options(ctx, 2, allowed: KeyArguments.publicKeyOptions)
                let key = try publicKey(object)
                ctx.push(bytes: try KeyArguments.serialize(key, opts, defaultCompressed: key.isCompressed))
                return 1
            },
            "sign": { object, ctx in
                let digest = try ctx.bytes(2)
                return try ctx.return(Signatures.table(try privateKey(object).signRecoverable(digest: digest)))
            },
            "sign_schnorr": { object, ctx in
                let message = try ctx.bytes(2)
                let opts = try Options(ctx, 3, allowed: ["aux"])
                ctx.push(bytes: try privateKey(object).signSchnorr(message: message, auxiliaryRandom: try opts.bytes("aux")))
                return 1
            },
            "ecdh": { object, ctx in
                let peer = try KeyArguments.publicKey(ctx, 2)
                ctx.push(bytes: try privateKey(object).sharedSecretX(with: peer).revealedBytes())
                return 1
            },
            "wif": { object, ctx in
                let opts = try Options(ctx, 2, allowed: ["coin", "compressed"])
                ctx.push(try privateKey(object).wif(coin: try opts.coin() ?? .bitcoin, compressed: try opts.boolean("compressed")))
                return 1
            },
            "address": { object, ctx in
                let (coin, kind) = try kindOrOptions(ctx, 2).coinAndKind()
                ctx.push(try Address.encode(try publicKey(object), kind: kind, coin: coin))
                return 1
            },
        ]
    }

    /// `"p2wpkh"` or `{coin = ..., kind = ...}` at argument `i`.
    static func kindOrOptions(_ ctx: LuaContext, _ i: Int32) throws -> Options {
        if ctx.typeName(i) == "string" {
            return Options(fields: LuaTable(["kind": try ctx.value(i)]), position: i)
        }
        if !ctx.isNil(i) && ctx.typeName(i) != "table" {
            throw LuaArgumentError(i, "address kind name or options table expected, got \(ctx.typeName(i))")
        }
        return try Options(ctx, i, allowed: ["coin", "kind"])
    }

    /// `02a1b2c3d4…e5f6a7b8`: enough to tell keys apart in a listing.
    static func shortHex(_ bytes: [UInt8]) -> String {
        guard bytes.count > 10 else { return Hex.encode(bytes) }
        return Hex.encode(bytes.prefix(5)) + "…" + Hex.encode(bytes.suffix(4))
    }
}

/// ECDSA signatures as Lua sees them: a table of byte strings.
enum Signatures {
    /// `{r=, s=, v=, recovery_id=, compact=, der=, rsv=}`; v is 27 + recovery_id as Ethereum writes it.
    static func table(_ signature: RecoverableSignature) -> LuaValue {
        .table(LuaTable([
            "r": .string(signature.r),
            "s": .string(signature.s),
            "v": .integer(Int64(27 + signature.recoveryID)),
            "recovery_id": .integer(Int64(signature.recoveryID)),
            "compact": .string(signature.r + signature.s),
            "der": .string(signature.signature.der),
            "rsv": .string(signature.rsv),
        ]))
    }

    private static let forms = "64-byte compact r..s, 65-byte r..s..v, DER, or a signature table"

    /// A signature for verification: 64-byte compact, 65-byte rsv (v ignored), DER, or a table from `sign`.
    static func ecdsa(_ ctx: LuaContext, _ i: Int32) throws -> ECDSASignature {
        switch try ctx.value(i) {
        case .string(let bytes):
            if bytes.count == 64 { return try ECDSASignature(compact: bytes) }
            // v is documented as ignored: verification needs only r and s.
            if bytes.count == 65 { return try ECDSASignature(compact: Array(bytes[0..<64])) }
            guard bytes.first == 0x30 else {
                throw BindingError("invalid signature: \(bytes.count) bytes is neither 64-byte compact r..s, "
                                   + "65-byte r..s..v nor DER (which starts with 0x30)")
            }
            return try ECDSASignature(der: bytes)
        case .table(let table):
            if case .string(let compact) = table["compact"] { return try ECDSASignature(compact: compact) }
            if case .string(let der) = table["der"] { return try ECDSASignature(der: der) }
            throw LuaArgumentError(i, "signature table needs a 'compact' or 'der' field (as sign returns)")
        default:
            throw LuaArgumentError(i, "\(forms) expected, got \(ctx.typeName(i))")
        }
    }

    /// A recoverable signature: 65 bytes r..s..v (v 0...3 or 27...30) or a table from `sign`.
    static func recoverable(_ ctx: LuaContext, _ i: Int32) throws -> RecoverableSignature {
        switch try ctx.value(i) {
        case .string(let bytes):
            return try RecoverableSignature(rsv: bytes)
        case .table(let table):
            if case .string(let rsv) = table["rsv"] { return try RecoverableSignature(rsv: rsv) }
            throw LuaArgumentError(i, "signature table needs an 'rsv' field (as sign returns)")
        default:
            throw LuaArgumentError(i, "65-byte r..s..v string or signature table expected, got \(ctx.typeName(i))")
        }
    }
}
