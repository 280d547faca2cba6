import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices
import LuaRuntime

/// `keyhost.card.tapsigner` / `keyhost.card.satscard`: a Coinkite tap card opened for its family's own commands
/// (`card.open_tapsigner{}`, `card.open_satscard{}`), the methods those of `keyhost card tapsigner …` / `card satscard …`
/// returning the records they print. The CVC is the `cvc` option, else `KEYHOST_CVC`, else a prompt that does not echo.
final class TapCardObject: LuaObject {
    let session: TapCardSession
    private var cvc: [UInt8]?
    private var closed = false

    init(session: TapCardSession, cvc: [UInt8]?) {
        self.session = session
        self.cvc = cvc
    }

    deinit { if cvc != nil { zero(&cvc!) } }

    static let luaTypeName = "keyhost.card.tapcard"

    var luaDescription: String {
        guard !closed, let status = session.status else { return "\(Self.luaTypeName) (closed)" }
        return "\(Self.luaTypeName)(\(status.product.rawValue), reader \(session.readerName))"
    }

    func luaClose() {
        guard !closed else { return }
        closed = true
        if cvc != nil { zero(&cvc!) }
        cvc = nil
        session.close()
    }

    /// The CVC: the one given at open, else the front end's input.
    func secretCVC() throws -> SecretBytes {
        if let cvc { return SecretBytes(cvc) }
        return try session.cvc()
    }

    private static func method(_ command: String, _ body: @escaping (TapCardObject, LuaContext) throws -> Record) -> LuaMethod<TapCardObject> {
        { object, ctx in
            guard !object.closed else { throw BindingError("\(luaTypeName) is closed") }
            return try ctx.return(LuaValue(record: try cardCall(command) { try body(object, ctx) }))
        }
    }

    /// `chain_code`: 32 bytes of the caller's entropy, else random.
    private static func chainCode(_ ctx: LuaContext, _ index: Int32) throws -> [UInt8] {
        let opts = try Options(ctx, index, allowed: ["chain_code"])
        if let given = try opts.bytes("chain_code") {
            guard given.count == 32 else { throw LuaArgumentError(index, "option 'chain_code' is \(given.count) bytes; give 32") }
            return given
        }
        return secureRandomBytes(32)
    }

    static let luaMethods: [String: LuaMethod<TapCardObject>] = [
        "status": method("status") { object, _ in TapCardRecords.status(try object.session.card.getStatus()) },
        // TAPSIGNER
        "setup": method("new") { object, ctx in
            var chainCode = try chainCode(ctx, 2)
            defer { zero(&chainCode) }
            try object.session.card.setup(chainCode: chainCode, cvc: try object.secretCVC())
            return TapCardRecords.status(try object.session.card.getStatus())
        },
        "derive": method("derive") { object, ctx in
            let path = try CardSignerObject.path(try ctx.string(2), argument: 2)
            return TapCardRecords.derivation(try object.session.card.derive(path: path, cvc: try object.secretCVC()))
        },
        "xpub": method("xpub") { object, ctx in
            let master = try Options(ctx, 2, allowed: ["master"]).boolean("master") ?? false
            let node = try object.session.card.xpub(master: master, cvc: try object.secretCVC())
            let status = object.session.status
            let path = master ? "m" : (status?.path).map(TapCardRecords.pathText) ?? "m"
            return .object([("xpub", .string(node.extendedPublicKey((status?.isTestnet ?? false) ? .tpub : .xpub))), ("path", .string(path))])
        },
        "backup": method("backup") { object, _ in
            .bytes(try object.session.card.backup(cvc: try object.secretCVC()))
        },
        "change_cvc": method("change") { object, ctx in
            var new = try ctx.bytes(2)
            defer { zero(&new) }
            guard CKTap.cvcLengths.contains(new.count), new.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw LuaArgumentError(2, "a new CVC is 6 to 32 digits; the one given is not (nothing was changed)")
            }
            try object.session.card.changeCVC(from: try object.secretCVC(), to: SecretBytes(new))
            return .object([("changed", .string("cvc"))])
        },
        // SATSCARD
        "slots": method("dump") { object, _ in
            let status = try object.session.card.getStatus()
            let slots = try (0..<status.numSlots).map { try object.session.card.dump(slot: $0) }
            return .object([("active_slot", .integer(Int64(status.activeSlot))), ("slots", .array(slots.map(TapCardRecords.slot)))])
        },
        "read": method("read") { object, _ in
            let status = try object.session.card.getStatus()
            let slot = try object.session.card.readSlot()
            return .object([("slot", .integer(Int64(status.activeSlot))), ("address", .string(slot.address)),
                            ("public_key", .bytes(slot.publicKey.compressed))])
        },
        // Lua's confirmation is the call itself: a script that unseals means it (the CLI asks on the terminal).
        "unseal": method("unseal") { object, ctx in
            let slot = try Options(ctx, 2, allowed: ["slot"]).integer("slot")
            let status = try object.session.card.getStatus()
            guard let slot, slot == Int64(status.activeSlot) else {
                throw LuaArgumentError(2, "option 'slot' must name the active slot (\(status.activeSlot)); a SATSCARD unseals only that one")
            }
            let unsealed = try object.session.card.unseal(cvc: try object.secretCVC())
            return .object([("slot", .integer(Int64(unsealed.slot))), ("address", .string(unsealed.address)),
                            ("public_key", .bytes(unsealed.privateKey.publicKey.compressed)),
                            ("private_key", .bytes(unsealed.privateKey.revealedBytes()))])
        },
        "new": method("new") { object, ctx in
            var chainCode = try chainCode(ctx, 2)
            defer { zero(&chainCode) }
            let slot = try object.session.card.newSlot(chainCode: chainCode, cvc: try object.secretCVC())
            return .object([("slot", .integer(Int64(slot))), ("address", .string(try object.session.card.readSlot().address))])
        },
        // The card as a signer of the interface every family shares; closing it leaves this object open.
        "signer": { object, ctx in
            guard !object.closed else { throw BindingError("\(luaTypeName) is closed") }
            let card = try cardCall(nil) { try object.session.signingCard(cvc: object.cvc) }
            ctx.push(object: CardSignerObject(card: card))
            return 1
        },
    ]
}

extension CardModule {
    static let tapCardOptions = ["reader", "state", "seed", "wait", "trace", "record", "cvc"]

    /// `card.open_tapsigner{}` / `card.open_satscard{}`: the card `keyhost card tapsigner|satscard …` opens.
    static func openTapCard(_ ctx: LuaContext, _ sources: [CardReaderSource], product: CardFamily) throws -> TapCardObject {
        let opts = try Options(ctx, 1, allowed: tapCardOptions)
        let request = try familyRequest(opts)
        var cvc = try opts.bytes("cvc")
        defer { if cvc != nil { zero(&cvc!) } }
        let session = try cardCall(nil) { try TapCardSession.open(request, readers: sources, frontEnd: .lua, product: product) }
        return TapCardObject(session: session, cvc: cvc)
    }

    /// `card.tapsigner_backup(data, key)`: a TAPSIGNER backup opened with the key printed on the card (32 hex digits).
    static func openBackup(_ ctx: LuaContext) throws -> Record {
        let data = try ctx.bytes(1)
        var keyText = try ctx.bytes(2)
        defer { zero(&keyText) }
        guard let raw = try? Hex.decode(String(decoding: keyText.filter { $0 != 0x20 && $0 != 0x2D }, as: UTF8.self)), raw.count == 16 else {
            throw LuaArgumentError(2, "the backup key is 32 hex digits (as printed on the card)")
        }
        let backup = try cardCall("backup") { try CKTapBackup(data: data, key: SecretBytes(raw)) }
        return .object([("path", .string(backup.path)), ("xpub", .string(backup.master.neutered().extendedPublicKey())),
                        ("xprv", .string(try backup.master.extendedPrivateKey()))])
    }
}
