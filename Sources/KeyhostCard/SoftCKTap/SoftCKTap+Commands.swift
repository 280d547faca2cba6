import KeyhostCrypto

/// Commands both products answer.
extension SoftCKTap {
    func read(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        let user = try args.nonce()
        guard currentSlot.isUsed else { throw SoftCKTapFailure(406, "slot un-used") }
        let session = isTapsigner ? try authenticate("read", args) : nil
        let key = try slotKeys(state.activeSlot).key
        let sig = try proof(key, userNonce: user, suffix: [UInt8(truncatingIfNeeded: state.activeSlot)])
        var pub = key.publicKey.compressed
        if let session { pub = [pub[0]] + CKTapAuth.xor(Array(pub[1...]), sessionKey: session) }
        newNonce()
        return .textMap([("sig", sig), ("card_nonce", .bytes(nonce)), ("pubkey", .bytes(pub))])
    }

    func derive(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        let user = try args.nonce()
        guard currentSlot.isUsed else { throw SoftCKTapFailure(400, "slot unused") }
        if isTapsigner {
            let path = try args.path("path") ?? currentSlot.path
            guard path.count <= CKTap.maxDerivePathDepth else { throw SoftCKTapFailure(400, "path too long") }
            guard path.allSatisfy({ $0 & CKTap.hardened != 0 }) else { throw SoftCKTapFailure(400, "must have all hardened components") }
            _ = try authenticate("derive", args)
            state.slots[0].path = path
            let keys = try slotKeys(0)
            let sig = try proof(keys.key, userNonce: user, suffix: keys.chainCode)
            newNonce()
            return .textMap([("sig", sig), ("chain_code", .bytes(keys.chainCode)), ("master_pubkey", .bytes(keys.master.publicKey.compressed)),
                             ("pubkey", .bytes(keys.key.publicKey.compressed)), ("card_nonce", .bytes(nonce))])
        }
        guard !args.has("path") else { throw SoftCKTapFailure(400, "dont give path") }
        let keys = try slotKeys(state.activeSlot)
        guard let chainCode = currentSlot.chainCode else { throw SoftCKTapFailure(406, "slot un-used") }
        // As the emulator: a SATSCARD's derive leaves the nonce as it was.
        return .textMap([("sig", try proof(keys.master, userNonce: user, suffix: chainCode)), ("chain_code", .bytes(chainCode)),
                         ("card_nonce", .bytes(nonce)), ("master_pubkey", .bytes(keys.master.publicKey.compressed))])
    }

    func check(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        let user = try args.nonce()
        var suffix: [UInt8] = []
        if !isTapsigner && currentSlot.isUsed && currentSlot.sealed {
            suffix = try slotKeys(state.activeSlot).key.publicKey.compressed
        }
        let sig = try proof(try cardKey, userNonce: user, suffix: suffix)
        newNonce()
        return .textMap([("auth_sig", sig), ("card_nonce", .bytes(nonce))])
    }

    func new(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        guard !currentSlot.isUsed else { throw SoftCKTapFailure(400, "current slot not used yet") }
        let slot: Int
        if isTapsigner {
            guard args.int("slot") ?? 0 == 0 else { throw SoftCKTapFailure(400, "wrong slot") }
            slot = 0
        } else {
            guard let given = args.int("slot") else { throw SoftCKTapFailure(400, "need slot #") }
            guard given == state.activeSlot else { throw SoftCKTapFailure(400, "wrong slot") }
            slot = given
        }
        _ = try authenticate("new", args)
        let chainCode: [UInt8]
        if let given = args.bytes("chain_code") {
            guard given.count == 32 else { throw SoftCKTapFailure(400, "bad chain code") }
            chainCode = given
        } else {
            guard slot >= 1, let previous = state.slots[slot - 1].chainCode else { throw SoftCKTapFailure(400, "need chain code for first slot at least") }
            chainCode = previous
        }
        var path: [UInt32] = [0]
        if isTapsigner {
            path = try args.path("path") ?? CKTap.defaultTapsignerPath
            guard path.count <= CKTap.maxDerivePathDepth, path.allSatisfy({ $0 & CKTap.hardened != 0 }) else { throw SoftCKTapFailure(400, "need hard path") }
        }
        state.slots[slot] = SoftCKTapState.Slot(masterKey: random.privateKey().revealedBytes(), chainCode: chainCode, path: path, sealed: true)
        _ = try slotKeys(slot)
        newNonce()
        return .textMap([("slot", .int(slot)), ("card_nonce", .bytes(nonce))])
    }

    func sign(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        let slot = args.int("slot") ?? 0
        guard (0..<state.slots.count).contains(slot) else { throw SoftCKTapFailure(400, "bad slot") }
        guard let masked = args.bytes("digest"), masked.count == 32 else { throw SoftCKTapFailure(400, "digest wrong size") }
        let session = try authenticate("sign", args)
        let digest = CKTapAuth.xor(masked, sessionKey: session)
        // The card grinds for a low R three times and gives up with 205 one time in eight; the nonce stays.
        if options.unluckySigning && random.bytes(1)[0] < 32 { throw SoftCKTapFailure(205, "unlucky number") }
        let key: PrivateKey
        if isTapsigner {
            let subpath = try args.path("subpath") ?? []
            guard subpath.count <= CKTap.maxSubpathDepth, subpath.allSatisfy({ $0 & CKTap.hardened == 0 }) else { throw SoftCKTapFailure(400, "bad subpath") }
            key = try slotKeys(0, subpath: subpath).key
        } else {
            guard !args.has("subpath") else { throw SoftCKTapFailure(400, "no subpath on satscard") }
            try requireVisible(slot)
            key = try slotKeys(slot).key
        }
        let sig = try key.signLowR(digest: digest).compact
        newNonce()
        return .textMap([("slot", .int(slot)), ("card_nonce", .bytes(nonce)), ("sig", .bytes(sig)), ("pubkey", .bytes(key.publicKey.compressed))])
    }

    /// A slot whose private key may be shown or used: unsealed, and the current one or an earlier one.
    func requireVisible(_ slot: Int) throws {
        if slot == state.activeSlot {
            guard !currentSlot.sealed else { throw SoftCKTapFailure(406, "if using current slot, but be unsealed") }
        } else {
            guard slot < state.activeSlot else { throw SoftCKTapFailure(406, "can only view old slots") }
        }
        guard state.slots[slot].isUsed else { throw SoftCKTapFailure(406, "never picked a key for that slot") }
    }
}
