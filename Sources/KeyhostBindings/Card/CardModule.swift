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
                try ctx.return(LuaValue(record: try cardCall(nil) { try CardReaderState.listRecord(sources) }))
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
            module.function("default_pairing_store") { ctx in
                ctx.push(PairingStore.defaultPath())
                return 1
            }
        }
    }

    static func open(_ ctx: LuaContext, _ sources: [CardReaderSource]) throws -> CardSessionObject {
        let opts = try Options(ctx, 1, allowed: openOptions)
        let trace = try traceMode(opts)
        let seed = try opts.integer("seed")
        let replayPath = try opts.string("replay")

        // The transport.
        let readerName: String
        var base: CardChannel
        var virtualCard: SoftKeycard?
        var isVirtual = false
        if let replayPath {
            if opts.has("reader") { throw LuaArgumentError(1, "options 'replay' and 'reader' exclude each other") }
            let text: String
            do {
                let bytes = try BoundedFile.read(replayPath, limit: 64 * BoundedFile.mebibyte)
                guard let decoded = String(bytes: bytes, encoding: .utf8) else {
                    throw BoundedFile.ReadError(path: replayPath, problem: "is not UTF-8 text")
                }
                text = decoded
            } catch let error as BoundedFile.ReadError {
                throw CardServiceError(kind: "bad_transcript", "cannot read transcript \(replayPath): \(error.problem)")
            }
            base = try cardCall(nil) { try ReplayChannel(text: text) }
            readerName = "replay \(PathText.lastComponent(replayPath))"
        } else {
            let (name, source) = try resolveReader(opts, sources)
            readerName = name
            if let source {
                for key in ["state", "applet", "pairing_slots"] where opts.has(key) {
                    throw LuaArgumentError(1, "option '\(key)' is for reader = \"virtual\" only")
                }
                if seed != nil {
                    throw LuaArgumentError(1, "option 'seed' makes the host's secure channel keys predictable; it is for reader = \"virtual\" and replays only")
                }
                let wait = try opts["wait"].isNil ? nil : number(opts, "wait")
                base = try cardCall(nil) { try source.connect(reader: name, options: CardConnectOptions(wait: wait)) }
            } else {
                isVirtual = true
                var options = SoftKeycardOptions()
                if let applet = try opts["applet"].isNil ? nil : appletVersion(opts) { options.appletVersion = applet }
                if let slots = try opts.integer("pairing_slots") {
                    guard (1...100).contains(slots) else { throw LuaArgumentError(1, "option 'pairing_slots' is \(slots); use 1...100") }
                    options.pairingSlots = Int(slots)
                }
                if let seed { options.randomSeed = Array("keyhost virtual card \(seed)".utf8) }
                let card = try cardCall(nil) {
                    try VirtualCards.open(state: try opts.string("state"), options: options, appletGiven: opts.has("applet"))
                }
                virtualCard = card
                base = card
            }
        }

        // Recording (raw exchanges) below tracing, so the trace shows what was recorded.
        var recorder: RecordingChannel?
        let recordPath = try opts.string("record")
        if recordPath != nil {
            let recording = RecordingChannel(base)
            recorder = recording
            base = recording
        }
        var tracer: TracingChannel?
        if let trace {
            let tracing = TracingChannel(base, showsPlaintext: trace)
            tracer = tracing
            base = tracing
        }

        let random: RandomSource = seed.map { SeededRandom(seed: Array("keyhost card client \($0)".utf8)) } ?? SystemRandom()
        var trusted = IdentityCertificate.defaultCAKeys
        if isVirtual || replayPath != nil { trusted.append(SoftKeycard.testCAKey().publicKey) }
        if case .table(let keys) = opts["trusted_ca_keys"] {
            for (i, key) in keys.array.enumerated() {
                guard case .string(let bytes) = key, let publicKey = try? PublicKey(bytes: bytes) else {
                    throw LuaArgumentError(1, "trusted_ca_keys[\(i + 1)] is not a 33 or 65 byte public key")
                }
                trusted.append(publicKey)
            }
        } else if !opts["trusted_ca_keys"].isNil {
            throw LuaArgumentError(1, "option 'trusted_ca_keys' must be a list of public keys (33 or 65 bytes each)")
        }
        let card = KeycardCommandSet(channel: base, random: random, trustedCAKeys: trusted)

        let store: PairingStore
        switch opts["pairing_store"] {
        case .nil:
            // A card that vanishes with the process keeps its pairings in memory too.
            let ephemeral = (isVirtual && !opts.has("state")) || replayPath != nil
            store = PairingStore(ephemeral ? .memory : .file(PairingStore.defaultPath()))
        case .boolean(false):
            store = PairingStore(.memory)
        case .string:
            guard let path = try opts.string("pairing_store"), path.hasPrefix("/") || !path.isEmpty else {
                throw LuaArgumentError(1, "option 'pairing_store' must be a file path or false")
            }
            store = PairingStore(.file(URL(fileURLWithPath: path).standardizedFileURL.path))
        default:
            throw LuaArgumentError(1, "option 'pairing_store' must be a file path or false, got \(opts["pairing_store"].typeName)")
        }

        return CardSessionObject(session: CardSession(readerName: readerName, card: card, virtualCard: virtualCard, recorder: recorder,
                                                      recordPath: recordPath, tracer: tracer, store: store))
    }

    /// `reader = "virtual" | name | index`; without it, the first reader with a card (`ReaderChoice`, as every command).
    static func resolveReader(_ opts: Options, _ sources: [CardReaderSource]) throws -> (String, CardReaderSource?) {
        let wanted: String?
        switch opts["reader"] {
        case .nil: wanted = nil
        case .integer, .number: wanted = "\(try opts.integer("reader") ?? 0)"
        case .string: wanted = try opts.string("reader") ?? ""
        default:
            throw LuaArgumentError(1, "option 'reader' must be a reader name or number, got \(opts["reader"].typeName)")
        }
        let wait = try opts["wait"].isNil ? nil : number(opts, "wait")
        let entry = try ReaderChoice.choose(wanted, sources: sources, virtualHint: "reader = \"virtual\"", wait: wait)
        return (entry.name, entry.source)
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
