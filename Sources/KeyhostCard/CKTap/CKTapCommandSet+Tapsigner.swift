import KeyhostCrypto

/// A TAPSIGNER's derivation: the key at `path` and its chain code, with the master key.
public struct CKTapDerivation: Equatable, Sendable {
    public var path: [UInt32]
    public var publicKey: PublicKey
    public var chainCode: [UInt8]
    public var masterPublicKey: PublicKey
}

/// A signature the card made, checked against the key it used.
public struct CKTapSignature: Equatable, Sendable {
    public var signature: ECDSASignature
    public var publicKey: PublicKey
    public var slot: Int
}

extension CKTapCommandSet {
    /// TAPSIGNER setup (`new`): the card picks its master key, mixed with `chainCode` (32 bytes of the caller's entropy).
    /// SATSCARD: `newSlot`.
    public func setup(chainCode: [UInt8], cvc: SecretBytes) throws {
        _ = try requireProduct(true, command: "new")
        guard chainCode.count == 32 else { throw CKTapError.invalidArgument("a chain code has 32 bytes; got \(chainCode.count)") }
        _ = try sendAuthenticated("new", cvc: cvc, [("slot", .int(0)), ("chain_code", .bytes(chainCode))])
        try getStatus()
    }

    /// Sets the TAPSIGNER's derivation to `path` (hardened components only, at most 8) and checks the card's proof.
    @discardableResult
    public func derive(path: [UInt32], cvc: SecretBytes) throws -> CKTapDerivation {
        _ = try requireProduct(true, command: "derive")
        guard path.count <= CKTap.maxDerivePathDepth else { throw CKTapError.invalidArgument("a TAPSIGNER derives at most \(CKTap.maxDerivePathDepth) levels; the path has \(path.count)") }
        guard path.allSatisfy({ $0 & CKTap.hardened != 0 }) else { throw CKTapError.invalidArgument("a TAPSIGNER derives hardened components only") }
        let nonce = userNonce()
        guard let before = cardNonce else { throw CKTapError.malformedAnswer(command: "derive", reason: "no card nonce known") }
        let (answer, _) = try sendAuthenticated("derive", cvc: cvc, [("path", .array(path.map { .unsigned(UInt64($0)) })), ("nonce", .bytes(nonce))])
        let f = try CKTapFields(answer, command: "derive")
        let chainCode = try f.bytes("chain_code", count: 32)
        let key = try f.publicKey("pubkey")
        try verifyProof(try f.signature("sig"), by: key, cardNonce: before, userNonce: nonce, suffix: chainCode, command: "derive")
        status?.path = path
        return CKTapDerivation(path: path, publicKey: key, chainCode: chainCode, masterPublicKey: try f.publicKey("master_pubkey"))
    }

    /// The master (`m`) or derived extended public key, checked to be well-formed BIP32.
    public func xpub(master: Bool, cvc: SecretBytes) throws -> HDNode {
        let st = try requireProduct(true, command: "xpub")
        let (answer, _) = try sendAuthenticated("xpub", cvc: cvc, [("master", .bool(master))])
        let raw = try CKTapFields(answer, command: "xpub").bytes("xpub", count: 78)
        let parsed: (node: HDNode, family: ExtendedKeyVersion)
        do { parsed = try HDNode.parse(Base58.encodeCheck(raw)) } catch {
            throw CKTapError.malformedAnswer(command: "xpub", reason: "the 78 bytes are no BIP32 extended public key (\(error))")
        }
        guard !parsed.node.isPrivate else { throw CKTapError.malformedAnswer(command: "xpub", reason: "the card answered a private extended key") }
        let expected = st.isTestnet ? "tpub" : "xpub"
        guard parsed.node.extendedPublicKey(parsed.family).hasPrefix(expected) else {
            throw CKTapError.malformedAnswer(command: "xpub", reason: "the extended key is not an \(expected)")
        }
        return parsed.node
    }

    /// The TAPSIGNER's key at its current derivation, proven by a signature over our nonce (`read`).
    public func readPublicKey(cvc: SecretBytes) throws -> PublicKey {
        _ = try requireProduct(true, command: "read")
        let nonce = userNonce()
        guard let before = cardNonce else { throw CKTapError.malformedAnswer(command: "read", reason: "no card nonce known") }
        let (answer, sessionKey) = try sendAuthenticated("read", cvc: cvc, [("nonce", .bytes(nonce))])
        let f = try CKTapFields(answer, command: "read")
        let masked = try f.bytes("pubkey", count: 33)
        let raw = [masked[0]] + CKTapAuth.xor(Array(masked[1...]), sessionKey: sessionKey)
        guard let key = try? PublicKey(bytes: raw) else { throw f.fail("the decrypted 'pubkey' is not a public key") }
        try verifyProof(try f.signature("sig"), by: key, cardNonce: before, userNonce: nonce, suffix: [0], command: "read")
        return key
    }

    /// Signs a 32-byte digest with the key at the derivation plus `subpath` (0 to 2 non-hardened components);
    /// on a SATSCARD with the key of unsealed `slot`. Retries the card's 205 (unlucky number) as cktap does.
    public func sign(digest: [UInt8], subpath: [UInt32] = [], slot: Int = 0, cvc: SecretBytes) throws -> CKTapSignature {
        let st = try knownStatus()
        guard digest.count == 32 else { throw CKTapError.invalidArgument("a digest has 32 bytes; got \(digest.count)") }
        guard subpath.count <= CKTap.maxSubpathDepth, subpath.allSatisfy({ $0 & CKTap.hardened == 0 }) else {
            throw CKTapError.invalidArgument("a subpath has at most 2 non-hardened components")
        }
        guard st.isTapsigner || subpath.isEmpty else { throw CKTapError.invalidArgument("a SATSCARD signs with a slot's key; it takes no subpath") }
        var args: [(String, CKTapCBOR)] = [("slot", .int(st.isTapsigner ? 0 : slot))]
        if st.isTapsigner { args.append(("subpath", .array(subpath.map { .unsigned(UInt64($0)) }))) }
        var lastError: Error = CKTapError.unluckyNumber(command: "sign")
        for _ in 0..<Self.signAttempts {
            do {
                let (answer, _) = try sendAuthenticated("sign", cvc: cvc, args) { key in [("digest", .bytes(CKTapAuth.xor(digest, sessionKey: key)))] }
                let f = try CKTapFields(answer, command: "sign")
                let key = try f.publicKey("pubkey")
                let sig = try f.signature("sig")
                guard sig.isLowS, (try? key.verify(sig, digest: digest)) == true else {
                    throw CKTapError.verificationFailed(command: "sign", reason: "the signature does not verify for the digest and the key the card names")
                }
                return CKTapSignature(signature: sig, publicKey: key, slot: try f.optionalInt("slot", range: 0...255) ?? slot)
            } catch CKTapError.unluckyNumber(let command) {
                lastError = CKTapError.unluckyNumber(command: command)
            }
        }
        throw lastError
    }

    /// The TAPSIGNER's encrypted backup (AES-128-CTR under the key printed on the card); see `CKTapBackup`.
    public func backup(cvc: SecretBytes) throws -> [UInt8] {
        _ = try requireProduct(true, command: "backup")
        let (answer, _) = try sendAuthenticated("backup", cvc: cvc)
        let data = try CKTapFields(answer, command: "backup").bytes("data", max: 240)
        guard !data.isEmpty else { throw CKTapError.malformedAnswer(command: "backup", reason: "field 'data' is empty") }
        if let n = status?.numBackups { status?.numBackups = min(n + 1, 127) }
        return data
    }

    /// Changes the TAPSIGNER's CVC (6 to 32 bytes; the card takes digits only). The card refuses (425) before a backup.
    public func changeCVC(from old: SecretBytes, to new: SecretBytes) throws {
        _ = try requireProduct(true, command: "change")
        try Self.checkCVC(new)
        var plain = new.revealedBytes()
        defer { zero(&plain) }
        let (answer, _) = try sendAuthenticated("change", cvc: old) { key in [("data", .bytes(CKTapAuth.xor(plain, sessionKey: key)))] }
        guard (try CKTapFields(answer, command: "change").flag("success")) else {
            throw CKTapError.malformedAnswer(command: "change", reason: "the card did not answer success")
        }
    }
}
