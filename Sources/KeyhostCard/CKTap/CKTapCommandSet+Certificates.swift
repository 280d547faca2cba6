import KeyhostCrypto

extension CKTapCommandSet {
    /// Proves the card holds its key and that the factory chain signs it up to one of `trustedRoots`
    /// (compressed keys; `CKTap.factoryRootKey` for real cards). Returns the root key reached.
    ///
    /// On a SATSCARD with a sealed slot the card also signs that slot's key; it is read (and checked) first.
    @discardableResult
    public func certificateCheck(trustedRoots: [[UInt8]]) throws -> [UInt8] {
        var st = try getStatus()
        var slotKey: [UInt8] = []
        if !st.isTapsigner && st.blankedAddress != nil && st.activeSlot < st.numSlots {
            let dump = try self.dump(slot: st.activeSlot)
            if dump.sealed == true { slotKey = try readSlot().publicKey.compressed }
            st = try getStatus()
        }
        let chainAnswer = try CKTapFields(try send("certs"), command: "certs")
        guard let items = chainAnswer.map["cert_chain"]?.arrayValue, (1...8).contains(items.count) else {
            throw chainAnswer.fail("field 'cert_chain' is not a list of 1 to 8 certificates")
        }
        let chain: [[UInt8]] = try items.map {
            guard let sig = $0.byteString, sig.count == 65 else { throw chainAnswer.fail("a certificate is not a 65-byte recoverable signature") }
            return sig
        }
        let nonce = userNonce()
        guard let before = cardNonce else { throw CKTapError.malformedAnswer(command: "check", reason: "no card nonce known") }
        let check = try CKTapFields(try send("check", [("nonce", .bytes(nonce))]), command: "check")
        try verifyProof(try check.signature("auth_sig"), by: st.cardPublicKey, cardNonce: before, userNonce: nonce, suffix: slotKey, command: "check")
        var key = st.cardPublicKey
        for certificate in chain {
            key = try Self.recoverSigner(certificate, message: key.compressed)
        }
        let root = key.compressed
        guard trustedRoots.contains(root) else { throw CKTapError.untrustedRoot(root) }
        return root
    }

    /// The key that made a 65-byte certificate over SHA-256(`message`); the header byte carries the recovery id as
    /// BIP-137 writes it (27–30, 31–34 or 39–42).
    static func recoverSigner(_ certificate: [UInt8], message: [UInt8]) throws -> PublicKey {
        let header = Int(certificate[0])
        let id: Int
        switch header {
        case 27...30: id = header - 27
        case 31...34: id = header - 31
        case 39...42: id = header - 39
        default: throw CKTapError.verificationFailed(command: "certs", reason: "a certificate's header byte \(header) is no BIP-137 recovery id")
        }
        do {
            let sig = try RecoverableSignature(compact: Array(certificate[1...]), recoveryID: id)
            return try sig.recoverPublicKey(digest: Hash.sha256(message))
        } catch {
            throw CKTapError.verificationFailed(command: "certs", reason: "a certificate does not recover to a public key")
        }
    }
}
