import KeyhostCrypto

extension SoftCKTap {
    /// Checks a command's CVC proof and returns the session key. Three wrong CVCs in a row (401) start a 15 s
    /// back-off: until `wait` has used it up every proof is refused unchecked (429), and a wrong CVC after it
    /// starts the delay again.
    func authenticate(_ command: String, _ args: SoftCKTapArguments) throws -> SecretBytes {
        guard let epubkey = args.bytes("epubkey"), let xcvc = args.bytes("xcvc") else { throw SoftCKTapFailure(403, "need epub&xcvc") }
        guard state.authDelay == 0 else { throw SoftCKTapFailure(429, "rate limited") }
        guard epubkey.count == 33, let peer = try? PublicKey(bytes: epubkey) else { throw SoftCKTapFailure(400, "they gave a bogus pubkey") }
        let key = try CKTapAuth.sessionKey(privateKey: try cardKey, publicKey: peer)
        let expected = CKTapAuth.maskCVC(state.cvc, sessionKey: key, cardNonce: nonce, command: command)
        guard xcvc.count == state.cvc.count, constantTimeEqual(xcvc, expected) else {
            state.authFailures += 1
            if state.authFailures >= CKTap.freeAuthAttempts { state.authDelay = CKTap.authDelaySeconds }
            throw SoftCKTapFailure(401, "bad auth")
        }
        state.authFailures = 0
        return key
    }

    private func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Slot `index`'s master node and the key at its derivation (plus `subpath`).
    func slotKeys(_ index: Int, subpath: [UInt32] = []) throws -> (key: PrivateKey, chainCode: [UInt8], master: PrivateKey) {
        let slot = state.slots[index]
        guard let masterKey = slot.masterKey, let chainCode = slot.chainCode else { throw SoftCKTapFailure(406, "slot un-used") }
        let master = try PrivateKey(bytes: masterKey)
        do {
            let node = try BIP32.derive(BIP32.Node(key: master, chainCode: chainCode), slot.path + subpath)
            return (node.key, node.chainCode, master)
        } catch {
            throw SoftCKTapFailure(205, "unlucky number")
        }
    }

    /// A compact low-S signature by `key` over SHA-256(OPENDIME ‖ card nonce ‖ user nonce ‖ `suffix`).
    func proof(_ key: PrivateKey, userNonce: [UInt8], suffix: [UInt8]) throws -> CKTapCBOR {
        .bytes(try key.signLowR(digest: Hash.sha256(CKTap.signedPrefix + nonce + userNonce + suffix)).compact)
    }

    func requireKind(_ kind: SoftCKTapState.Kind) throws {
        guard state.kind == kind else { throw SoftCKTapFailure(404, kind == .tapsigner ? "only for ts" : "not for ts") }
    }
}
