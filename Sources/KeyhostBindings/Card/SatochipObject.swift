import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices
import LuaRuntime

/// `keyhost.card.satochip`: a Satochip opened by `card.open_satochip{}` (`SatochipConnection`, as `keyhost card
/// satochip …` opens it). Each method returns the record the command prints; card errors are structured errors.
/// Closing it drops the secure channel.
final class SatochipObject: LuaObject {
    let connection: SatochipConnection
    private var closed = false

    init(connection: SatochipConnection) { self.connection = connection }

    static let luaTypeName = "keyhost.card.satochip"

    var luaDescription: String {
        closed ? "\(Self.luaTypeName) (closed)"
            : "\(Self.luaTypeName)(reader \(connection.readerName), \(connection.status.version), \(SatochipIdentity.state(connection.status)))"
    }

    func luaClose() {
        guard !closed else { return }
        closed = true
        connection.close()
    }

    /// A method whose card errors become structured errors naming `command`; refused once the object is closed.
    private static func method(_ command: String, _ body: @escaping (SatochipConnection, LuaContext) throws -> Record)
        -> LuaMethod<SatochipObject> {
        { object, ctx in
            guard !object.closed else { throw BindingError("\(luaTypeName) is closed") }
            return try ctx.return(LuaValue(record: try cardCall(command) { try body(object.connection, ctx) }))
        }
    }

    /// A secret argument at `index` (a string), wiped once used.
    private static func secret(_ ctx: LuaContext, _ index: Int32) throws -> SecretBytes {
        var bytes = try ctx.bytes(index)
        defer { zero(&bytes) }
        return SecretBytes(bytes)
    }

    static let luaMethods: [String: LuaMethod<SatochipObject>] = [
        "status": method("GET STATUS") { connection, _ in try connection.statusRecord() },
        // The card as a signer of the interface every family shares (after s:verify_pin); closing it leaves this open.
        "signer": { object, ctx in
            guard !object.closed else { throw BindingError("\(luaTypeName) is closed") }
            let connection = object.connection
            try cardCall(nil) {
                try connection.refreshStatus()
                try connection.requireSeed()
            }
            let signer = SatochipSigner(card: connection.card)
            ctx.push(object: CardSignerObject(card: SigningCard(signer: signer, readerName: connection.readerName, frontEnd: .lua,
                                                                identity: { try CardHolder.keyUID(signer) },
                                                                apdus: { connection.transport.counter.count }, close: {})))
            return 1
        },
        "info": method("GET STATUS") { connection, ctx in
            try connection.infoRecord(pin: ctx.isNil(2) ? nil : try secret(ctx, 2)).record
        },
        "setup": method("SETUP") { connection, ctx in
            let opts = try Options(ctx, 2, allowed: ["pin", "puk", "pin_tries", "puk_tries"])
            guard var pin = try opts.bytes("pin"), var puk = try opts.bytes("puk") else {
                throw LuaArgumentError(2, "options 'pin' and 'puk' are required")
            }
            defer { zero(&pin); zero(&puk) }
            return try connection.setup(pin: SecretBytes(pin), puk: SecretBytes(puk), pinTries: Int(clamping: try opts.integer("pin_tries") ?? 5),
                                        pukTries: Int(clamping: try opts.integer("puk_tries") ?? 5))
        },
        "verify_pin": method("VERIFY PIN") { connection, ctx in try connection.verifiedPIN(try secret(ctx, 2)) },
        "change_pin": method("CHANGE PIN") { connection, ctx in try connection.changePIN(old: try secret(ctx, 2), new: try secret(ctx, 3)) },
        "unblock_pin": method("UNBLOCK PIN") { connection, ctx in try connection.unblockPIN(puk: try secret(ctx, 2)) },
        "import_seed": method("BIP32 IMPORT SEED") { connection, ctx in try connection.importSeed(try secret(ctx, 2)) },
        // Refused unless the card proves it is genuine (a trusted CA, `trusted_ca_keys`), as the command refuses it.
        "reset_seed": method("BIP32 RESET SEED") { connection, ctx in
            let pin = try secret(ctx, 2)
            try connection.requireSeed()
            try SatochipConnection.mapping("VERIFY PIN") { try connection.card.verifyPIN(pin) }
            _ = try connection.requireTrusted("reset_seed")
            return try connection.resetSeed(pin: pin)
        },
        "label": method("GET LABEL") { connection, ctx in try connection.label(setting: try ctx.optionalString(2)) },
        "certificate": method("EXPORT PKI CERTIFICATE") { connection, _ in try connection.certificateRecord().record },
    ]
}

extension CardModule {
    static let satochipOptions = ["reader", "state", "seed", "wait", "trace", "record", "trusted_ca_keys"]

    /// `card.open_satochip{}`: a Satochip in a reader, or the software one (`reader = "virtual"`, `state = FILE`,
    /// created when the file is not there), opened as `keyhost card satochip …` opens it.
    static func openSatochip(_ ctx: LuaContext, _ sources: [CardReaderSource]) throws -> SatochipObject {
        let opts = try Options(ctx, 1, allowed: satochipOptions)
        var request = try familyRequest(opts)
        request.trustedCAKeys = try trustedCAKeys(opts)
        return SatochipObject(connection: try cardCall(nil) { try SatochipConnection.open(request, readers: sources, frontEnd: .lua) })
    }

    /// The request of a family's own object (`card.open_satochip{}`, `card.open_tapsigner{}`, …): reader, and for the
    /// software card its state file and seed, trace, record, wait.
    static func familyRequest(_ opts: Options) throws -> CardOpenRequest {
        var request = CardOpenRequest(reader: try reader(opts))
        request.trace = try traceMode(opts)
        request.seed = try opts.integer("seed")
        request.record = try opts.string("record")
        if !request.isVirtual && (opts.has("state") || opts.has("seed")) {
            throw LuaArgumentError(1, "options 'state' and 'seed' are for reader = \"virtual\" only")
        }
        request.state = try opts.string("state")
        if !opts["wait"].isNil { request.connect.wait = try number(opts, "wait") }
        return request
    }
}
