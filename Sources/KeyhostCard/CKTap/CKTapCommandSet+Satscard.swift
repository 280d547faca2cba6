import KeyhostCrypto

/// One SATSCARD slot as `dump` shows it.
public struct CKTapSlot: Equatable, Sendable {
    public enum State: String, Sendable { case unused, sealed, unsealed }
    public var slot: Int
    public var state: State
    /// Full for unsealed slots, blanked (`…___…`) for sealed ones.
    public var address: String?
    public var publicKey: PublicKey?
    /// With the CVC, for unsealed slots: the spending key, checked against the address.
    public var privateKey: PrivateKey?
    public var masterPrivateKey: PrivateKey?
    public var chainCode: [UInt8]?
    public var tampered: Bool

    public var sealed: Bool? { state == .unused ? nil : state == .sealed }
}

/// An unsealed SATSCARD slot's keys.
public struct CKTapUnsealed: Equatable, Sendable {
    public var slot: Int
    public var privateKey: PrivateKey
    public var address: String
    public var masterPrivateKey: PrivateKey
    public var chainCode: [UInt8]
}

extension CKTapCommandSet {
    /// The current slot's key and full address (`read`): the card's signature over our nonce proves the key,
    /// and the address must match both ends of the blanked one in status.
    public func readSlot() throws -> (publicKey: PublicKey, address: String) {
        _ = try requireProduct(false, command: "read")
        let st = try getStatus()
        let nonce = userNonce()
        let f = try CKTapFields(try send("read", [("nonce", .bytes(nonce))]), command: "read")
        let key = try f.publicKey("pubkey")
        try verifyProof(try f.signature("sig"), by: key, cardNonce: st.cardNonce, userNonce: nonce, suffix: [UInt8(truncatingIfNeeded: st.activeSlot)], command: "read")
        let address = try self.address(of: key, testnet: st.isTestnet)
        try Self.checkBlanked(st.blankedAddress, matches: address, command: "read")
        return (key, address)
    }

    static func checkBlanked(_ blanked: String?, matches address: String, command: String) throws {
        guard let blanked else { throw CKTapError.invalidState(command: command, message: "status shows no address for the current slot") }
        let parts = blanked.split(separator: "_", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].count == CKTap.addressTrim, parts[1].count == CKTap.addressTrim,
              address.hasPrefix(parts[0]), address.hasSuffix(parts[1]) else {
            throw CKTapError.verificationFailed(command: command, reason: "the slot key's address \(address) does not match \(blanked) from status")
        }
    }

    /// Checks that the current slot's key is BIP32 m/0 of the master key and chain code the card shows (`derive`):
    /// the caller's chain code went into the key. Returns the address and the chain code.
    public func verifySlotDerivation() throws -> (address: String, chainCode: [UInt8]) {
        let st = try requireProduct(false, command: "derive")
        let slot = try readSlot()
        let nonce = userNonce()
        guard let before = cardNonce else { throw CKTapError.malformedAnswer(command: "derive", reason: "no card nonce known") }
        let f = try CKTapFields(try send("derive", [("nonce", .bytes(nonce))]), command: "derive")
        let chainCode = try f.bytes("chain_code", count: 32)
        let master = try f.publicKey("master_pubkey")
        try verifyProof(try f.signature("sig"), by: master, cardNonce: before, userNonce: nonce, suffix: chainCode, command: "derive")
        guard let node = HDNode(publicKey: master, chainCode: chainCode, depth: 0, parentFingerprint: 0, childNumber: 0),
              let child = try? node.derive(child: 0), child.publicKey.compressed == slot.publicKey.compressed else {
            throw CKTapError.verificationFailed(command: "derive", reason: "the slot key is not m/0 of the master key and chain code")
        }
        return (try address(of: child.publicKey, testnet: st.isTestnet), chainCode)
    }

    /// Unseals the current slot and returns its keys, each checked: the private key matches the key the card
    /// reports, and is m/0 of the master private key and chain code.
    public func unseal(cvc: SecretBytes) throws -> CKTapUnsealed {
        let st = try requireProduct(false, command: "unseal")
        let (answer, sessionKey) = try sendAuthenticated("unseal", cvc: cvc, [("slot", .int(st.activeSlot))])
        let f = try CKTapFields(answer, command: "unseal")
        var masked = try f.bytes("privkey", count: 32)
        defer { zero(&masked) }
        guard let key = try? PrivateKey(secret: SecretBytes(CKTapAuth.xor(masked, sessionKey: sessionKey))) else {
            throw f.fail("the decrypted 'privkey' is not a private key")
        }
        let reported = try f.publicKey("pubkey")
        var masterBytes = try f.bytes("master_pk", count: 32)
        defer { zero(&masterBytes) }
        guard let master = try? PrivateKey(secret: SecretBytes(masterBytes)) else { throw f.fail("'master_pk' is not a private key") }
        let chainCode = try f.bytes("chain_code", count: 32)
        guard key.publicKey.compressed == reported.compressed,
              let node = HDNode(publicKey: master.publicKey, chainCode: chainCode, depth: 0, parentFingerprint: 0, childNumber: 0),
              let child = try? node.derive(child: 0), child.publicKey.compressed == reported.compressed else {
            throw CKTapError.verificationFailed(command: "unseal", reason: "the private key does not match the slot's public key or its derivation")
        }
        let slot = try f.optionalInt("slot", range: 0...255) ?? st.activeSlot
        try getStatus()
        return CKTapUnsealed(slot: slot, privateKey: key, address: try address(of: reported, testnet: st.isTestnet),
                             masterPrivateKey: master, chainCode: chainCode)
    }

    /// Starts the next SATSCARD slot (`new`); without `chainCode` the card reuses the previous slot's.
    @discardableResult
    public func newSlot(chainCode: [UInt8]? = nil, cvc: SecretBytes) throws -> Int {
        let st = try requireProduct(false, command: "new")
        if let chainCode, chainCode.count != 32 { throw CKTapError.invalidArgument("a chain code has 32 bytes; got \(chainCode.count)") }
        var args: [(String, CKTapCBOR)] = [("slot", .int(st.activeSlot))]
        if let chainCode { args.append(("chain_code", .bytes(chainCode))) }
        let (answer, _) = try sendAuthenticated("new", cvc: cvc, args)
        let slot = try CKTapFields(answer, command: "new").int("slot", range: 0...255)
        try getStatus()
        return slot
    }

    /// A slot's state (`dump`); with the CVC an unsealed slot's keys too, checked against its address.
    public func dump(slot: Int, cvc: SecretBytes? = nil) throws -> CKTapSlot {
        let st = try requireProduct(false, command: "dump")
        guard (0..<st.numSlots).contains(slot) else { throw CKTapError.invalidArgument("slot \(slot) is outside 0..<\(st.numSlots)") }
        let answer: CKTapCBOR
        var sessionKey: SecretBytes?
        if let cvc {
            let result = try sendAuthenticated("dump", cvc: cvc, [("slot", .int(slot))])
            answer = result.answer
            sessionKey = result.sessionKey
        } else {
            answer = try send("dump", [("slot", .int(slot))])
        }
        let f = try CKTapFields(answer, command: "dump")
        var out = CKTapSlot(slot: slot, state: .sealed, tampered: try f.flag("tampered"))
        if let sealed = try f.optionalFlag("sealed") {
            out.state = sealed ? .sealed : .unsealed
        } else if try f.optionalFlag("used") == false {
            out.state = .unused
        } else if f.has("privkey") {
            out.state = .unsealed
        } else {
            throw f.fail("neither 'sealed', 'used' nor 'privkey'")
        }
        out.address = try f.optionalText("addr", max: 90)
        if f.has("pubkey") { out.publicKey = try f.publicKey("pubkey") }
        if let sessionKey, f.has("privkey") {
            var masked = try f.bytes("privkey", count: 32)
            defer { zero(&masked) }
            guard let key = try? PrivateKey(secret: SecretBytes(CKTapAuth.xor(masked, sessionKey: sessionKey))) else { throw f.fail("the decrypted 'privkey' is not a private key") }
            if let reported = out.publicKey, reported.compressed != key.publicKey.compressed {
                throw CKTapError.verificationFailed(command: "dump", reason: "the private key does not match the slot's public key")
            }
            out.privateKey = key
            out.publicKey = key.publicKey
            out.address = try address(of: key.publicKey, testnet: st.isTestnet)
            if f.has("master_pk") {
                var m = try f.bytes("master_pk", count: 32)
                defer { zero(&m) }
                out.masterPrivateKey = try? PrivateKey(secret: SecretBytes(CKTapAuth.xor(m, sessionKey: sessionKey)))
            }
            out.chainCode = try f.optionalBytes("chain_code", count: 32)
        }
        if out.state == .unsealed, let key = out.publicKey, let shown = out.address, try address(of: key, testnet: st.isTestnet) != shown {
            throw CKTapError.verificationFailed(command: "dump", reason: "the slot's address does not belong to its public key")
        }
        return out
    }
}
