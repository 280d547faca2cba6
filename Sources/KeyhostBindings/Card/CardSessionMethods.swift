import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices
import LuaRuntime

extension CardSessionObject {
    /// A method whose card errors become structured errors naming `command`.
    private static func method(_ command: String?, _ body: @escaping (CardSessionObject, KeycardCommandSet, LuaContext) throws -> Int32)
        -> LuaMethod<CardSessionObject> {
        { object, ctx in
            let card = try object.live()
            defer { object.noteChannel(card) }
            return try cardCall(command) { try body(object, card, ctx) }
        }
    }

    static let luaMethods: [String: LuaMethod<CardSessionObject>] = [
        // MARK: selection, set-up, pairing
        "select": method("SELECT") { object, card, ctx in
            try ctx.return(CardTables.info(object, card, try object.session.select(card)))
        },
        "info": method("SELECT") { object, card, ctx in
            try ctx.return(CardTables.info(object, card, try object.session.info(card)))
        },
        "init": method("INIT") { object, card, ctx in
            let opts = try Options(ctx, 2, allowed: ["pin", "puk", "pairing_password", "pin_retries", "puk_retries", "duress_pin"])
            var pin = try required(opts, "pin"), puk = try required(opts, "puk")
            var duress = try opts.bytes("duress_pin")
            defer { zero(&pin); zero(&puk); if duress != nil { zero(&duress!) } }
            try DuressPIN.check(pin: pin, puk: puk, duress: duress)
            let info = try object.session.info(card)
            var password: SecretBytes?
            if info.secureChannelVersion == .v1 {
                guard let given = try opts.bytes("pairing_password") else {
                    throw LuaArgumentError(2, "option 'pairing_password' is required by applet 3.x cards (they pair with it)")
                }
                password = SecretBytes(given)
            }
            let pinRetries = try opts.integer("pin_retries").map { Int(clamping: $0) }
            let pukRetries = try opts.integer("puk_retries").map { Int(clamping: $0) }
            try object.session.initialize(card, pin: SecretBytes(pin), puk: SecretBytes(puk), pairingPassword: password,
                                          duress: duress.map { SecretBytes($0) }, pinRetries: pinRetries, pukRetries: pukRetries)
            // What `keyhost card init --json` prints; this method does not pair, so no pairing_index.
            return try ctx.return(LuaValue(record: CardRecords.initialized(try object.session.info(card), pairingIndex: nil)))
        },
        "pair": method("PAIR") { object, card, ctx in
            let opts = try Options(ctx, 2, allowed: ["pairing_password", "password", "store", "ephemeral"])
            if opts.has("password") {
                throw LuaArgumentError(2, "option 'password' is now 'pairing_password', as in s:init{} and s:auto{}")
            }
            // 4.x cards do not pair: refuse before anything is sent (a re-SELECT would drop the open secure channel).
            let info = try object.session.info(card)
            if info.secureChannelVersion == .v2 { throw KeycardError.unsupported(.pair, applet: "\(info.version)") }
            let password = try object.session.frontEnd.pairingPassword.resolve(try opts.bytes("pairing_password"))
            let mode: PairingMode = try opts.boolean("ephemeral") == true ? .ephemeral : .persistent
            let pairing = try object.session.pair(card, password: password, mode: mode, persist: try opts.boolean("store") ?? true)
            // `keyhost card pair`'s record, plus the pairing itself for s:open_secure_channel{index = ..., key = ...}.
            let record = CardRecords.paired(instanceUID: info.instanceUID, index: Int(pairing.index), new: true)
            guard case .table(var table) = LuaValue(record: record) else { return 0 }
            table["index"] = .integer(Int64(pairing.index))
            table["key"] = .string(pairing.key.revealedBytes())
            return try ctx.return(.table(table))
        },
        "open_secure_channel": method("OPEN SECURE CHANNEL") { object, card, ctx in
            let opts = try Options(ctx, 2, allowed: ["index", "key"])
            if opts.has("index") || opts.has("key") {
                guard let index = try opts.integer("index"), (0...255).contains(index), let key = try opts.bytes("key"), key.count == 32 else {
                    throw LuaArgumentError(2, "a pairing is {index = 0...255, key = 32 bytes} (as s:pair returns)")
                }
                card.pairing = try Pairing(index: UInt8(index), key: SecretBytes(key))
            }
            try object.session.openSecureChannel(card)
            return 0
        },
        "auto": method(nil) { object, card, ctx in
            let opts = try Options(ctx, 2, allowed: ["pin", "pairing_password"])
            var pin = try opts.bytes("pin"), password = try opts.bytes("pairing_password")
            defer { if pin != nil { zero(&pin!) }; if password != nil { zero(&password!) } }
            return try ctx.return(LuaValue(record: try object.session.auto(card, pin: pin, password: password)))
        },
        "unpair": method("UNPAIR") { _, card, ctx in
            let index = try integerArgument(ctx, 2, "pairing index", in: 0...255)
            try card.unpair(index: UInt8(index))
            return 0
        },
        "unpair_others": method("UNPAIR") { object, card, ctx in
            // Finding the slots in use resets the secure channel: the PIN is verified again, from `pin`, else KEYHOST_PIN or a prompt.
            let opts = try Options(ctx, 2, allowed: ["pin"])
            var pin = try opts.bytes("pin")
            defer { if pin != nil { zero(&pin!) } }
            let freed = try object.session.unpairOthers(card, occupied: nil, pin: pin)
            return try ctx.return(.table(LuaTable(array: freed.map { .integer(Int64($0)) })))
        },
        "factory_reset": method("FACTORY RESET") { object, card, ctx in
            try object.session.factoryReset(card)
            return 0
        },

        // MARK: credentials
        "verify_pin": method("VERIFY PIN") { object, card, ctx in
            var given = try ctx.optionalBytes(2)
            defer { if given != nil { zero(&given!) } }
            try object.session.verifyPIN(card, try object.session.frontEnd.pin.resolve(given))
            return 0
        },
        "change_pin": method("CHANGE PIN") { _, card, ctx in
            var value = try ctx.bytes(2)
            defer { zero(&value) }
            try card.changePIN(SecretBytes(value))
            return 0
        },
        "change_puk": method("CHANGE PIN") { _, card, ctx in
            var value = try ctx.bytes(2)
            defer { zero(&value) }
            try card.changePUK(SecretBytes(value))
            return 0
        },
        "change_pairing_password": method("CHANGE PIN") { _, card, ctx in
            var value = try ctx.bytes(2)
            defer { zero(&value) }
            try card.changePairingSecret(try PairingSecret.derive(password: SecretBytes(value).text))
            return 0
        },
        "unblock_pin": method("UNBLOCK PIN") { object, card, ctx in
            var puk = try ctx.bytes(2), pin = try ctx.bytes(3)
            defer { zero(&puk); zero(&pin) }
            try card.unblockPIN(puk: SecretBytes(puk), newPIN: SecretBytes(pin))
            object.session.setPINVerified(true)
            return 0
        },
        "status": method("GET STATUS") { _, card, ctx in
            try ctx.return(LuaValue(record: try CardRecords.status(card)))
        },

        // MARK: keys
        "load_seed": method("LOAD KEY") { _, card, ctx in
            var seed = try ctx.bytes(2)
            defer { zero(&seed) }
            ctx.push(bytes: try card.loadKey(seed: SecretBytes(seed)))
            return 1
        },
        "load_key": method("LOAD KEY") { _, card, ctx in
            let key: PrivateKey
            var chainCode: [UInt8]?
            var includePublic = true
            if ctx.typeName(2) == "table" {
                let opts = try Options(ctx, 2, allowed: ["private_key", "chain_code", "public_key"])
                guard var raw = try opts.bytes("private_key") else {
                    throw LuaArgumentError(2, "option 'private_key' (32 bytes) is required; or pass a key object or hd node as argument #2")
                }
                defer { zero(&raw) }
                key = try PrivateKey(secret: SecretBytes(raw))
                chainCode = try opts.bytes("chain_code")
                includePublic = try opts.boolean("public_key") ?? true
            } else {
                key = try KeyArguments.privateKey(ctx, 2)
                let opts = try Options(ctx, 3, allowed: ["chain_code", "public_key", "extended"])
                chainCode = try opts.bytes("chain_code")
                if chainCode == nil, ctx.typeName(2) == NodeObject.luaTypeName, try opts.boolean("extended") ?? true {
                    chainCode = try ctx.object(2, as: NodeObject.self).live().chainCode
                }
                includePublic = try opts.boolean("public_key") ?? true
            }
            ctx.push(bytes: try card.loadKey(privateKey: key, chainCode: chainCode, includePublicKey: includePublic))
            return 1
        },
        "generate_key": method("GENERATE KEY") { _, card, ctx in
            ctx.push(bytes: try card.generateKey())
            return 1
        },
        "generate_mnemonic": method("GENERATE MNEMONIC") { _, card, ctx in
            let words = try integerArgument(ctx, 2, "word count", in: 12...24, default: 12)
            guard Mnemonic.validWordCounts.contains(Int(words)) else {
                throw LuaArgumentError(2, "word count \(words) is not 12, 15, 18, 21 or 24")
            }
            let indexes = try card.generateMnemonic(wordCount: Int(words))
            ctx.push(try KeycardMnemonic.mnemonic(fromIndexes: indexes).phrase)
            try ctx.push(.table(LuaTable(array: indexes.map { .integer(Int64($0)) })))
            return 2
        },
        "remove_key": method("REMOVE KEY") { _, card, ctx in
            try card.removeKey()
            return 0
        },
        "derive": method("DERIVE KEY") { _, card, ctx in
            let path = try CardTables.keyPath(ctx, 2)
            try card.deriveKey(path)
            return 0
        },
        "set_pinless_path": method("SET PINLESS PATH") { _, card, ctx in
            let components: [UInt32]
            if ctx.isNil(2) {
                components = []
            } else {
                let path = try CardTables.keyPath(ctx, 2)
                guard path.source == .master else { throw LuaArgumentError(2, "the PIN-less path must be absolute (m/...)") }
                components = path.components
            }
            try card.setPinlessPath(components)
            return 0
        },
        "export_key": method("EXPORT KEY") { _, card, ctx in
            let opts = try Options(ctx, 2, allowed: ["path", "kind", "family", "xpub"])
            let path = try opts.string("path").map { text -> KeyPath in
                do { return try KeyPath(text) } catch { throw LuaArgumentError(2, "option 'path': \(error)") }
            }
            let kindName = try opts.string("kind") ?? "public"
            let option: ExportOption
            switch kindName {
            case "public": option = .publicOnly
            case "extended": option = .extendedPublic
            case "private": option = .privateAndPublic
            default: throw LuaArgumentError(2, "option 'kind' is \"\(kindName)\"; use \"public\", \"extended\" or \"private\"")
            }
            var family = ExtendedKeyVersion.xpub
            if let name = try opts.string("family") {
                guard let found = ExtendedKeyVersion.lookup(prefix: name), found.publicPrefix == name else {
                    throw LuaArgumentError(2, "option 'family': unknown extended public key family \"\(name)\" (xpub, ypub, zpub, tpub, ...)")
                }
                family = found
            }
            // The xpub's parent fingerprint costs one more EXPORT KEY (the parent's key): `xpub = false` skips both.
            let wantsXpub = try opts.boolean("xpub") ?? true
            if !wantsXpub && opts.has("family") {
                throw LuaArgumentError(2, "option 'family' is the xpub's; it makes no sense with xpub = false")
            }
            if path == nil, card.applicationInfo?.secureChannelVersion == .v2 {
                // 4.x has no current key: without a path EXPORT KEY answers with the master key, which nobody asks for by accident.
                throw LuaArgumentError(2, "option 'path' is required on applet 4.x cards (they have no current key); use \"m\" for the master key")
            }
            return try ctx.return(LuaValue(record: try CardRecords.exportedKey(card, option, path: path, family: family, xpub: wantsXpub)))
        },

        // MARK: signing
        "sign": method("SIGN") { _, card, ctx in
            let digest = try ctx.bytes(2)
            guard digest.count == 32 else { throw LuaArgumentError(2, "digest of \(digest.count) bytes; SIGN takes a 32-byte hash") }
            let opts = try Options(ctx, 3, allowed: ["path", "make_current", "pinless"])
            let mode: SignMode
            if try opts.boolean("pinless") == true {
                if opts.has("path") { throw LuaArgumentError(3, "options 'pinless' and 'path' exclude each other") }
                mode = .pinless
            } else if let text = try opts.string("path") {
                let path: KeyPath
                do { path = try KeyPath(text) } catch { throw LuaArgumentError(3, "option 'path': \(error)") }
                mode = try opts.boolean("make_current") == true ? .deriveAndMakeCurrent(path) : .derive(path)
            } else {
                if try opts.boolean("make_current") == true { throw LuaArgumentError(3, "option 'make_current' needs a 'path'") }
                mode = .current
            }
            let signature = try card.sign(digest: digest, mode: mode)
            guard case .table(var table) = Signatures.table(signature.signature) else { return 0 }
            table["public_key"] = .string(signature.publicKey.compressed)
            return try ctx.return(.table(table))
        },
        // The card as a signer of the interface every family shares; closing it leaves this session open.
        "signer": method(nil) { object, card, ctx in
            guard card.isSecureChannelOpen, object.pinVerified else {
                throw BindingError("s:signer() needs the PIN verified: call s:auto{...} (or open the secure channel and verify the PIN) first")
            }
            let info = card.applicationInfo
            let uid = info?.keyUID ?? info?.instanceUID ?? []
            let session = object.session
            ctx.push(object: CardSignerObject(card: SigningCard(signer: KeycardSigner(card: card), readerName: object.readerName, frontEnd: .lua,
                                                                identity: { uid }, apdus: { session.apduCount }, close: {})))
            return 1
        },
        "sign_schnorr": method("SIGN") { _, card, ctx in
            let digest = try ctx.bytes(2)
            guard digest.count == 32 else { throw LuaArgumentError(2, "digest of \(digest.count) bytes; Schnorr SIGN takes a 32-byte hash") }
            let opts = try Options(ctx, 3, allowed: ["path", "tweak"])
            let path = try opts.string("path").map { text -> KeyPath in
                do { return try KeyPath(text) } catch { throw LuaArgumentError(3, "option 'path': \(error)") }
            }
            let tweak = try opts.bytes("tweak") ?? [UInt8](repeating: 0, count: 32)
            guard tweak.count == 32 else { throw LuaArgumentError(3, "option 'tweak' must be 32 bytes, got \(tweak.count)") }
            let signature = try card.signSchnorr(digest: digest, path: path, tweak: tweak)
            return try ctx.return(.table(LuaTable([
                "signature": .string(signature.signature),
                "public_key": .string(signature.publicKey.compressed),
                "x_only": .string(signature.publicKey.xOnly.bytes),
            ])))
        },
        "get_challenge": method("GET CHALLENGE") { _, card, ctx in
            ctx.push(bytes: try card.getChallenge(length: Int(try integerArgument(ctx, 2, "length", in: 1...245, default: 32))))
            return 1
        },

        // MARK: data
        "get_data": method("GET DATA") { _, card, ctx in
            let slot = try CardTables.dataSlot(try Options(ctx, 2, allowed: ["type"]))
            ctx.push(bytes: try card.getData(slot: slot))
            return 1
        },
        "store_data": method("STORE DATA") { _, card, ctx in
            let data = try ctx.bytes(2)
            let slot = try CardTables.dataSlot(try Options(ctx, 3, allowed: ["type"]))
            try card.storeData(data, slot: slot)
            return 0
        },

        // MARK: raw APDUs and test controls
        "transmit": method(nil) { object, card, ctx in
            let bytes = try ctx.bytes(2)
            let opts = try Options(ctx, 3, allowed: ["expect", "secure"])
            let command: CommandAPDU
            do { command = try CommandAPDU(bytes: bytes) } catch { throw LuaArgumentError(2, "\(error)") }
            let expected = try CardTables.expectedStatusWords(opts)
            let response: ResponseAPDU
            if try opts.boolean("secure") == true {
                guard let sc = card.secureChannel, sc.isOpen else {
                    throw KeycardError.secureChannelNotOpen(KeycardInstruction(rawValue: command.ins))
                }
                response = try sc.unwrap(try card.channel.transmit(try sc.wrap(command)), for: command)
                object.session.tracer?.plaintext(command: command, response: response)
            } else {
                response = try card.channel.transmit(command)
            }
            if let expected, !expected.contains(response.statusWord) {
                let ins = KeycardInstruction(rawValue: command.ins)
                let mapped = KeycardError.from(response.statusWord, instruction: ins).map { CardServiceError.from(keycard: $0, command: "\(ins)") }
                let wanted = expected.map { CardServiceError.hex($0) }.joined(separator: " or ")
                throw CardServiceError(kind: mapped?.kind ?? "unknown",
                                       "\(mapped?.text ?? "unexpected status") (expected \(wanted)): \(response.statusWord.name ?? "no ISO 7816 name")",
                                       statusWord: response.statusWord, retriesLeft: mapped?.retriesLeft, command: "\(ins)")
            }
            ctx.push(bytes: response.data)
            ctx.push(Int64(response.statusWord.rawValue))
            return 2
        },
        "inject_fault": method(nil) { object, card, ctx in
            guard let virtual = object.session.virtualCard else {
                throw BindingError("inject_fault works on virtual cards only (reader = \"virtual\")")
            }
            let opts = try Options(ctx, 2, allowed: ["sw", "drop", "count"])
            let count = Int(clamping: try opts.integer("count") ?? 1)
            if try opts.boolean("drop") == true {
                virtual.injectFault(.connectionDrop, count: count)
            } else if let sw = try opts.integer("sw"), (0...0xFFFF).contains(sw) {
                virtual.injectFault(.statusWord(StatusWord(UInt16(sw))), count: count)
            } else {
                throw LuaArgumentError(2, "give {sw = 0x6982} or {drop = true}")
            }
            return 0
        },
        "reader": method(nil) { object, _, ctx in
            ctx.push(object.readerName)
            return 1
        },
    ]

    private static func required(_ opts: Options, _ key: String) throws -> [UInt8] {
        guard let value = try opts.bytes(key) else { throw LuaArgumentError(opts.position, "option '\(key)' is required") }
        return value
    }
}

/// Lua tables and argument forms of the card module.
enum CardTables {
    /// SELECT's answer as `keyhost card info --json` prints it (`CardRecords.info`).
    static func info(_ object: CardSessionObject, _ card: KeycardCommandSet, _ info: ApplicationInfo) -> LuaValue {
        LuaValue(record: CardRecords.info(info, reader: object.readerName, trust: CardTrust(card, info)))
    }

    /// A Keycard path argument: `"m/44'/60'/0'/0/0"` (from the master), `"../1"` (parent), `"./0"` or `"0/1"` (current).
    static func keyPath(_ ctx: LuaContext, _ i: Int32) throws -> KeyPath {
        let text = try ctx.string(i)
        do { return try KeyPath(text) } catch { throw LuaArgumentError(i, "\(error)") }
    }

    static func dataSlot(_ opts: Options) throws -> DataSlot {
        let name = try opts.string("type") ?? "public"
        guard let slot = DataSlot(name: name) else {
            throw LuaArgumentError(opts.position, "option 'type' is \"\(name)\"; use \"public\", \"ndef\" or \"cash\"")
        }
        return slot
    }

    static func expectedStatusWords(_ opts: Options) throws -> [StatusWord]? {
        func word(_ value: LuaValue) throws -> StatusWord {
            if case .integer(let n) = value, (0...0xFFFF).contains(n) { return StatusWord(UInt16(n)) }
            throw LuaArgumentError(opts.position, "option 'expect' takes status words such as 0x9000 or a list of them")
        }
        switch opts["expect"] {
        case .nil: return nil
        case .table(let list): return try list.array.map(word)
        case let value: return [try word(value)]
        }
    }
}
