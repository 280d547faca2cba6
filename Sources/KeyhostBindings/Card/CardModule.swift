// URL from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
import KeyhostServices
import LuaRuntime

/// `keyhost.card`: Keycard sessions over the virtual card, PC/SC readers (through `CardReaderSource`s)
/// or a replayed transcript.
enum CardModule {
    static let openOptions = ["reader", "state", "applet", "seed", "pairing_slots", "wait", "trace", "record", "replay", "pairing_store",
                              "trusted_ca_keys"]

    static func register(in state: LuaState, readers sources: [CardReaderSource]) {
        state.registerModule("keyhost.card") { module in
            TLVFunctions.register(in: &module)  // tlv_parse, tlv_build, sw_name
            module.function("readers") { ctx in
                let names = try cardCall(nil) { try CardReaders.readerList(sources).map(\.name) }
                return try ctx.return(.table(LuaTable(array: names.map { .text($0) })))
            }
            // What `keyhost card list` shows: each real reader's index, name, whether a card is in it and its ATR.
            module.function("list") { ctx in
                try ctx.return(LuaValue(record: try cardCall(nil) { try CardReaderState.listRecord(sources, identify: true) }))
            }
            // The software card's certificate authority: trust it (trusted_ca_keys) to talk to a card
            // that `keyhost card serve --applet 4.0` serves through a real reader.
            module.function("test_ca_key") { ctx in
                ctx.push(bytes: SoftKeycard.testCAKey().publicKey.compressed)
                return 1
            }
            module.function("open") { ctx in
                ctx.push(object: try open(ctx, sources))
                return 1
            }
            // A card of any family, ready to sign: a Keycard (secure channel, PIN), else a Satochip (PIN), …
            module.function("signer") { ctx in
                ctx.push(object: try signer(ctx, sources))
                return 1
            }
            // A Satochip: `keyhost card satochip …`'s commands as methods.
            module.function("open_satochip") { ctx in
                ctx.push(object: try openSatochip(ctx, sources))
                return 1
            }
            // A TAPSIGNER or SATSCARD: `keyhost card tapsigner|satscard …`'s commands as methods.
            module.function("open_tapsigner") { ctx in
                ctx.push(object: try openTapCard(ctx, sources, product: .tapsigner))
                return 1
            }
            module.function("open_satscard") { ctx in
                ctx.push(object: try openTapCard(ctx, sources, product: .satscard))
                return 1
            }
            module.function("tapsigner_backup") { ctx in try ctx.return(LuaValue(record: try openBackup(ctx))) }
            module.function("satochip_test_ca_key") { ctx in
                ctx.push(bytes: SoftSatochip.testCAKey().publicKey.compressed)
                return 1
            }
            module.function("default_pairing_store") { ctx in
                ctx.push(PairingStore.defaultPath())
                return 1
            }
        }
    }

    /// `card.open{}`: the options as a `CardOpenRequest`, opened by `CardOpener` (as every command opens its card).
    static func open(_ ctx: LuaContext, _ sources: [CardReaderSource]) throws -> CardSessionObject {
        let request = try self.request(try Options(ctx, 1, allowed: openOptions))
        return CardSessionObject(session: try cardCall(nil) { try CardOpener.open(request, readers: sources, frontEnd: .lua) })
    }

    /// `card.signer{}`: `card.open{}`'s options and the secrets, opened for signing by `CardOpener.openSigner`, as
    /// `--card` of every command opens its card. `family` picks a new software card's family (virtual reader).
    static func signer(_ ctx: LuaContext, _ sources: [CardReaderSource]) throws -> CardSignerObject {
        let opts = try Options(ctx, 1, allowed: openOptions + ["pin", "pairing_password", "cvc", "family"])
        var request = try self.request(opts)
        if let name = try opts.string("family") {
            guard let family = CardFamily(rawValue: name) else {
                throw LuaArgumentError(1, "option 'family' is \"\(name)\"; use \(CardFamily.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            }
            guard request.isVirtual else { throw LuaArgumentError(1, "option 'family' is for reader = \"virtual\" only: a real card says what it is") }
            request.family = family
        }
        var pin = try opts.bytes("pin"), password = try opts.bytes("pairing_password"), cvc = try opts.bytes("cvc")
        defer { if pin != nil { zero(&pin!) }; if password != nil { zero(&password!) }; if cvc != nil { zero(&cvc!) } }
        let card = try cardCall(nil) {
            try CardOpener.openSigner(request, readers: sources, frontEnd: .lua, pin: pin, pairingPassword: password, cvc: cvc)
        }
        return CardSignerObject(card: card)
    }

    /// The request `card.open{}` and `card.signer{}` options describe.
    static func request(_ opts: Options) throws -> CardOpenRequest {
        var request = CardOpenRequest(reader: try reader(opts))
        request.trace = try traceMode(opts)
        request.seed = try opts.integer("seed")
        request.replay = try opts.string("replay")
        request.record = try opts.string("record")
        if request.replay != nil && opts.has("reader") { throw LuaArgumentError(1, "options 'replay' and 'reader' exclude each other") }
        if !request.isVirtual {
            for key in ["state", "applet", "pairing_slots"] where opts.has(key) {
                throw LuaArgumentError(1, "option '\(key)' is for reader = \"virtual\" only")
            }
            if request.seed != nil && request.replay == nil {
                throw LuaArgumentError(1, "option 'seed' makes the host's secure channel keys predictable; it is for reader = \"virtual\" and replays only")
            }
        }
        request.state = try opts.string("state")
        if !opts["applet"].isNil { request.applet = try appletVersion(opts) }
        if let slots = try opts.integer("pairing_slots") {
            guard (1...100).contains(slots) else { throw LuaArgumentError(1, "option 'pairing_slots' is \(slots); use 1...100") }
            request.pairingSlots = Int(slots)
        }
        if !opts["wait"].isNil { request.connect.wait = try number(opts, "wait") }
        request.trustedCAKeys = try trustedCAKeys(opts)
        switch opts["pairing_store"] {
        case .nil: request.pairingStore = .automatic
        case .boolean(false): request.pairingStore = .memory
        case .string:
            guard let path = try opts.string("pairing_store"), !path.isEmpty else {
                throw LuaArgumentError(1, "option 'pairing_store' must be a file path or false")
            }
            request.pairingStore = .file(URL(fileURLWithPath: path).standardizedFileURL.path)
        default:
            throw LuaArgumentError(1, "option 'pairing_store' must be a file path or false, got \(opts["pairing_store"].typeName)")
        }
        return request
    }

    /// `reader = "virtual" | name | index`; without it, the first reader with a card (`ReaderChoice`, as every command).
    static func reader(_ opts: Options) throws -> String? {
        switch opts["reader"] {
        case .nil: return nil
        case .integer, .number: return "\(try opts.integer("reader") ?? 0)"
        case .string: return try opts.string("reader") ?? ""
        default:
            throw LuaArgumentError(1, "option 'reader' must be a reader name or number, got \(opts["reader"].typeName)")
        }
    }

    /// `trusted_ca_keys = {key, ...}`: CA public keys trusted besides Status' own.
    static func trustedCAKeys(_ opts: Options) throws -> [PublicKey] {
        guard case .table(let keys) = opts["trusted_ca_keys"] else {
            if opts["trusted_ca_keys"].isNil { return [] }
            throw LuaArgumentError(1, "option 'trusted_ca_keys' must be a list of public keys (33 or 65 bytes each)")
        }
        return try keys.array.enumerated().map { i, key in
            guard case .string(let bytes) = key else {
                throw LuaArgumentError(1, "trusted_ca_keys[\(i + 1)] is not a 33 or 65 byte public key")
            }
            guard let publicKey = try? PublicKey(bytes: bytes) else {
                throw LuaArgumentError(1, [33, 65].contains(bytes.count)
                    ? "trusted_ca_keys[\(i + 1)] is not a point on secp256k1 (\(bytes.count) bytes, but not a public key)"
                    : "trusted_ca_keys[\(i + 1)] is not a 33 or 65 byte public key")
            }
            return publicKey
        }
    }

    static func appletVersion(_ opts: Options) throws -> AppletVersion {
        let text: String
        switch opts["applet"] {
        case .string: text = try opts.string("applet") ?? ""
        case .integer(let n): text = "\(n)"
        case .number(let n): text = "\(n)"
        default: throw LuaArgumentError(1, "option 'applet' must be \"3.2\" or \"4.0\", got \(opts["applet"].typeName)")
        }
        switch text {
        case "3.2", "3": return .v3_2
        case "4.0", "4": return .v4_0
        default: throw LuaArgumentError(1, "option 'applet' is \"\(text)\"; the virtual card emulates \"3.2\" and \"4.0\"")
        }
    }

    static func number(_ opts: Options, _ key: String) throws -> Double {
        switch opts[key] {
        case .integer(let n) where n >= 0: return Double(n)
        case .number(let n) where n >= 0 && n.isFinite: return n
        default: throw LuaArgumentError(opts.position, "option '\(key)' must be a number of seconds ≥ 0")
        }
    }

    /// nil: no trace; false: APDUs; true: APDUs and secure-channel plaintext. From `trace` or `KEYHOST_TRACE`.
    static func traceMode(_ opts: Options) throws -> Bool? {
        switch opts["trace"] {
        case .boolean(true): return CardTrace.fromEnvironment() ?? false
        case .boolean(false): return nil
        case .string:
            switch try opts.string("trace") {
            case "apdu": return false
            case "plaintext", "apdu,plaintext": return true
            case let other: throw LuaArgumentError(1, "option 'trace' is \"\(other ?? "")\"; use true, \"apdu\" or \"plaintext\"")
            }
        case .nil:
            return CardTrace.fromEnvironment()
        default:
            throw LuaArgumentError(1, "option 'trace' must be a boolean, \"apdu\" or \"plaintext\", got \(opts["trace"].typeName)")
        }
    }
}
