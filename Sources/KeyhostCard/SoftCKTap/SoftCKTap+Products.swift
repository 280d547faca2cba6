import KeyhostCrypto

/// TAPSIGNER-only and SATSCARD-only commands.
extension SoftCKTap {
    func xpub(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        try requireKind(.tapsigner)
        guard currentSlot.isUsed else { throw SoftCKTapFailure(400, "key not yet setup") }
        _ = try authenticate("xpub", args)
        let keys = try slotKeys(0)
        let path = currentSlot.path
        let version: [UInt8] = state.testnet ? [0x04, 0x35, 0x87, 0xCF] : [0x04, 0x88, 0xB2, 0x1E]
        var raw = version
        if args.flag("master") {
            raw.append(contentsOf: [UInt8](repeating: 0, count: 9))
            raw.append(contentsOf: currentSlot.chainCode ?? [])
            raw.append(contentsOf: keys.master.publicKey.compressed)
        } else {
            // As the card: the parent fingerprint is left zero (cktap's docs/limitations.md).
            raw.append(UInt8(truncatingIfNeeded: path.count))
            raw.append(contentsOf: [UInt8](repeating: 0, count: 4))
            raw.append(contentsOf: bigEndian(path.last ?? 0))
            raw.append(contentsOf: keys.chainCode)
            raw.append(contentsOf: keys.key.publicKey.compressed)
        }
        newNonce()
        return .textMap([("xpub", .bytes(raw)), ("card_nonce", .bytes(nonce))])
    }

    private func bigEndian(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)] }

    func backup(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        try requireKind(.tapsigner)
        guard currentSlot.isUsed else { throw SoftCKTapFailure(406, "secret not yet setup") }
        _ = try authenticate("backup", args)
        guard let chainCode = currentSlot.chainCode, let backupKey = state.backupKey else { throw SoftCKTapFailure(406, "secret not yet setup") }
        let master = try slotKeys(0).master
        let version: [UInt8] = state.testnet ? [0x04, 0x35, 0x83, 0x94] : [0x04, 0x88, 0xAD, 0xE4]
        var serialized = version
        serialized.append(contentsOf: [UInt8](repeating: 0, count: 9))
        serialized.append(contentsOf: chainCode)
        serialized.append(0)
        serialized.append(contentsOf: master.revealedBytes())
        defer { zero(&serialized) }
        var plain = Array(Base58.encodeCheck(serialized).utf8)
        plain.append(0x0A)
        plain.append(contentsOf: Array(Self.pathText(currentSlot.path).utf8))
        plain.append(0x0A)
        defer { zero(&plain) }
        let data = try AESCTR.apply(plain, key: backupKey)
        if state.numBackups != 127 { state.numBackups += 1 }
        newNonce()
        return .textMap([("data", .bytes(data)), ("card_nonce", .bytes(nonce))])
    }

    /// cktap's path2str: "m/84h/0h/0h".
    static func pathText(_ path: [UInt32]) -> String {
        (["m"] + path.map { $0 & CKTap.hardened != 0 ? "\($0 & ~CKTap.hardened)h" : "\($0)" }).joined(separator: "/")
    }

    func change(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        try requireKind(.tapsigner)
        guard let data = args.bytes("data"), CKTap.cvcLengths.contains(data.count) else { throw SoftCKTapFailure(400, "bad len on new cvc") }
        guard state.numBackups > 0 else { throw SoftCKTapFailure(425, "card not yet backed-up") }
        let session = try authenticate("change", args)
        let cvc = CKTapAuth.xor(data, sessionKey: session)
        guard cvc.allSatisfy({ (0x30...0x39).contains($0) }) else { throw SoftCKTapFailure(400, "numeric only") }
        state.cvc = cvc
        newNonce()
        return .textMap([("success", .bool(true)), ("card_nonce", .bytes(nonce))])
    }

    func unseal(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        try requireKind(.satscard)
        let session = try authenticate("unseal", args)
        guard args.int("slot") == state.activeSlot else { throw SoftCKTapFailure(400, "wrong slot") }
        guard currentSlot.isUsed, currentSlot.sealed else { throw SoftCKTapFailure(400, "already unsealed") }
        let slot = state.activeSlot
        let keys = try slotKeys(slot)
        state.slots[slot].sealed = false
        if state.activeSlot < state.slots.count - 1 { state.activeSlot += 1 }
        newNonce()
        return .textMap([("slot", .int(slot)), ("card_nonce", .bytes(nonce)), ("pubkey", .bytes(keys.key.publicKey.compressed)),
                         ("privkey", .bytes(CKTapAuth.xor(keys.key.revealedBytes(), sessionKey: session))),
                         ("chain_code", .bytes(state.slots[slot].chainCode ?? [])), ("master_pk", .bytes(keys.master.revealedBytes()))])
    }

    func dump(_ args: SoftCKTapArguments) throws -> CKTapCBOR {
        try requireKind(.satscard)
        guard let slot = args.int("slot"), (0..<state.slots.count).contains(slot) else { throw SoftCKTapFailure(400, "bad slot") }
        let session: SecretBytes?
        if args.has("epubkey") || args.has("xcvc") {
            guard args.has("epubkey") && args.has("xcvc") else { throw SoftCKTapFailure(400, "both xcvc and epubkey or neither") }
            session = try authenticate("dump", args)
        } else {
            session = nil
        }
        // As the card (the emulator says "bug compatible"): dump always moves the nonce on.
        newNonce()
        var pairs: [(String, CKTapCBOR)] = [("slot", .int(slot)), ("card_nonce", .bytes(nonce))]
        let here = state.slots[slot]
        if !here.sealed {
            let keys = try slotKeys(slot)
            if let session {
                try requireVisible(slot)
                pairs += [("privkey", .bytes(CKTapAuth.xor(keys.key.revealedBytes(), sessionKey: session))),
                          ("master_pk", .bytes(CKTapAuth.xor(keys.master.revealedBytes(), sessionKey: session))),
                          ("chain_code", .bytes(here.chainCode ?? [])), ("pubkey", .bytes(keys.key.publicKey.compressed))]
            } else {
                pairs += [("sealed", .bool(false)), ("addr", .text(try address(of: keys.key.publicKey))), ("pubkey", .bytes(keys.key.publicKey.compressed))]
            }
        } else if here.isUsed {
            pairs += [("sealed", .bool(true)), ("addr", .text(CKTap.blanked(try address(of: try slotKeys(slot).key.publicKey))))]
        } else {
            pairs.append(("used", .bool(false)))
        }
        return .textMap(pairs)
    }
}
