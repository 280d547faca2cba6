import KeyhostCrypto

extension SoftKeycard {
    var hasKey: Bool { state.masterKey != nil }
    var isExtended: Bool { state.masterChainCode != nil }

    // MARK: Loading

    func loadKey(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        switch LoadKeyType(rawValue: apdu.p1) {
        case .keyPair, .extendedKeyPair: try loadKeyPair(data)
        case .seed: try loadSeed(data)
        case nil: throw CardStatus(.incorrectP1P2)
        }
        return .secure(state.keyUID)
    }

    private func loadKeyPair(_ data: [UInt8]) throws {
        guard let template = try? TLV.parseAll(data).first(tag: 0xA1), let fields = try? template.children(),
              let secret = fields.first(tag: 0x81)?.value, let key = try? PrivateKey(bytes: secret) else {
            throw CardStatus(.wrongData)
        }
        if let pub = fields.first(tag: 0x80)?.value, (try? PublicKey(bytes: pub)) == nil { throw CardStatus(.wrongData) }
        var chainCode: [UInt8]?
        if let chain = fields.first(tag: 0x82)?.value {
            guard chain.count == 32 else { throw CardStatus(.wrongData) }
            chainCode = chain
        }
        adopt(key: key, chainCode: chainCode)
    }

    private func loadSeed(_ seed: [UInt8]) throws {
        guard (16...64).contains(seed.count), let master = try? BIP32.master(seed: seed) else { throw CardStatus(.wrongData) }
        adopt(key: master.key, chainCode: master.chainCode)
    }

    private func adopt(key: PrivateKey, chainCode: [UInt8]?) {
        state.masterKey = key.revealedBytes()
        state.masterChainCode = chainCode
        state.keyUID = Hash.sha256(key.publicKey.uncompressed)
        state.keyPath = []
        state.pinlessPath = []
    }

    func generateKey(_ data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        var seed = random.bytes(64)
        defer { wipe(&seed) }
        try loadSeed(seed)
        return .secure(state.keyUID)
    }

    func removeKey(_ data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        clearKeys()
        return .none
    }

    /// GENERATE MNEMONIC: P1 = checksum bits (4...8); answers 16-bit big-endian word indexes.
    func generateMnemonic(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        let checksumBits = Int(apdu.p1)
        guard (4...8).contains(checksumBits) else { throw CardStatus(.incorrectP1P2) }
        var entropy = random.bytes(checksumBits * 4)
        defer { wipe(&entropy) }
        let mnemonic = try Mnemonic(entropy: entropy)
        var out: [UInt8] = []
        for word in mnemonic.words {
            let index = Mnemonic.index(of: word) ?? 0
            out += [UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)]
        }
        return .secure(out)
    }

    // MARK: Paths

    /// The applet's `updateDerivationPath`: the path a command will use, from its source.
    func resolvePath(_ data: ArraySlice<UInt8>, source: UInt8) throws -> [UInt32] {
        guard isExtended else {
            if data.isEmpty { return [] }
            throw CardStatus(.conditionsNotSatisfied)
        }
        guard data.count % 4 == 0 else { throw CardStatus(.wrongData) }
        let components = (try? KeyPath.decode(Array(data))) ?? []
        var path: [UInt32]
        switch source {
        case DerivationSource.master.rawValue:
            path = components
        case DerivationSource.parent.rawValue:
            guard !state.keyPath.isEmpty else { throw CardStatus(.wrongP1P2) }
            path = state.keyPath.dropLast() + components
        case DerivationSource.current.rawValue:
            path = state.keyPath + components
        case DerivationSource.pinless.rawValue:
            guard data.isEmpty else { throw CardStatus(.wrongData) }
            path = state.pinlessPath
        default:
            throw CardStatus(.incorrectP1P2)
        }
        guard path.count <= KeyPath.maxDepth else { throw CardStatus(.wrongData) }
        return path
    }

    /// The key at `path`, using the alternate chain code after the alternate PIN was verified.
    func deriveKey(at path: [UInt32]) throws -> BIP32.Node {
        guard let secret = state.masterKey, let master = try? PrivateKey(bytes: secret) else { throw CardStatus(.conditionsNotSatisfied) }
        let masterChain = state.masterChainCode ?? [UInt8](repeating: 0, count: 32)
        let chain = usingAlternatePIN && isExtended ? Hash.sha256(masterChain) : masterChain
        let node: BIP32.Node
        do { node = try BIP32.derive(BIP32.Node(key: master, chainCode: chain), path) } catch { throw CardStatus(.dataInvalid) }
        if !isV2 {
            // The 3.2 applet's doDerive goes through derivationOutput: for the empty path it copies in only the
            // master private key, so the chain code EXPORT KEY then answers is the previous derivation's.
            if path.isEmpty {
                derivationOutput.replaceSubrange(0..<32, with: node.key.revealedBytes())
            } else {
                derivationOutput = node.key.revealedBytes() + node.chainCode
            }
        }
        return node
    }

    func deriveKey(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        state.keyPath = try resolvePath(data[...], source: apdu.p1)
        return .none
    }

    func setPinlessPath(_ data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        guard data.count % 4 == 0, data.count <= KeyPath.maxDepth * 4 else { throw CardStatus(.wrongData) }
        state.pinlessPath = (try? KeyPath.decode(data)) ?? []
        return .none
    }

    // MARK: Signing

    /// `A0 81 len { 80 41 public key, 30 DER }` (or `88 40 R.x ‖ s` for Schnorr), as both applets answer.
    private func signatureTemplate(publicKey: PublicKey, signature: TLV) throws -> [UInt8] {
        let body = TLV(tag: 0x80, value: publicKey.uncompressed).encoded() + signature.encoded()
        return [0xA0, 0x81, try byte(body.count)] + body
    }

    private func ecdsaTLV(_ key: PrivateKey, digest: [UInt8]) throws -> TLV {
        let der = try key.sign(digest: digest).der
        guard let tlv = try? TLV.parseAll(der).first(tag: 0x30) else { throw CardStatus(.unknown) }
        return tlv
    }

    /// 3.x SIGN: P1 00 current, 01 derive, 02 derive and make current, 03 PIN-less (may come without a channel).
    func signV1(_ apdu: CommandAPDU) throws -> Outcome {
        var source = apdu.p1 & 0xC0
        var makeCurrent = false, pinless = false
        switch apdu.p1 & 0x3F {
        case 0x00: source = DerivationSource.current.rawValue
        case 0x01: break
        case 0x02: makeCurrent = true
        case 0x03: pinless = true; source = DerivationSource.pinless.rawValue
        default: throw CardStatus(.wrongP1P2)
        }
        let data = pinless && !channelV1.isOpen ? apdu.data : try channelV1.preprocess(apdu)
        if pinless && state.pinlessPath.isEmpty { throw CardStatus(.referencedDataNotFound) }
        guard data.count >= 32 else { throw CardStatus(.wrongData) }
        let path = try resolvePath(data[32...], source: source)
        let pinlessPath = !state.pinlessPath.isEmpty && path == state.pinlessPath
        guard (pinVerified || pinless || pinlessPath) && hasKey else { throw CardStatus(.conditionsNotSatisfied) }
        let node = try deriveKey(at: path)
        let answer = try signatureTemplate(publicKey: node.key.publicKey, signature: try ecdsaTLV(node.key, digest: Array(data[0..<32])))
        if makeCurrent { state.keyPath = path }
        return channelV1.isOpen ? .secure(answer) : .plain(answer)
    }

    /// 4.x SIGN: P1 01 (path from the master), P2 = algorithm: 00 ECDSA, 03 BIP340 Schnorr (digest ‖ tweak ‖ path).
    func signV2(_ inner: CommandAPDU) throws -> Outcome {
        guard inner.p1 == 0x01 else { throw CardStatus(.wrongP1P2) }
        let data = inner.data
        let schnorr = inner.p2 == SigningAlgorithm.schnorrBIP340.rawValue
        let signLength = schnorr ? 64 : 32
        guard data.count >= signLength else { throw CardStatus(.wrongData) }
        guard pinVerified && hasKey else { throw CardStatus(.conditionsNotSatisfied) }
        let path = try resolvePath(data[signLength...], source: DerivationSource.master.rawValue)
        let node = try deriveKey(at: path)
        let digest = Array(data[0..<32])
        switch inner.p2 {
        case SigningAlgorithm.ecdsa.rawValue:
            return .secure(try signatureTemplate(publicKey: node.key.publicKey, signature: try ecdsaTLV(node.key, digest: digest)))
        case SigningAlgorithm.schnorrBIP340.rawValue:
            // The applet normalises the key to even y, adds the tweak, and signs (which normalises again).
            let tweaked = try Scalar.evenY(node.key).adding(tweak: Array(data[32..<64]))
            let signature = try tweaked.signSchnorr(message: digest, auxiliaryRandom: random.bytes(32))
            return .secure(try signatureTemplate(publicKey: node.key.publicKey, signature: TLV(tag: 0x88, value: signature)))
        default:
            throw CardStatus(.functionNotSupported)
        }
    }

    // MARK: Export

    func exportKey(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard pinVerified && hasKey else { throw CardStatus(.conditionsNotSatisfied) }
        guard let option = ExportOption(rawValue: apdu.p2) else { throw CardStatus(.incorrectP1P2) }
        var makeCurrent = false
        let path: [UInt32]
        if isV2 {
            path = try resolvePath(data[...], source: DerivationSource.master.rawValue)
        } else {
            var source = apdu.p1 & 0xC0
            switch apdu.p1 & 0x3F {
            case 0x00: source = DerivationSource.current.rawValue
            case 0x01: break
            case 0x02: makeCurrent = true
            default: throw CardStatus(.incorrectP1P2)
            }
            path = try resolvePath(data[...], source: source)
        }
        let eip1581 = KeyPath.isEIP1581(path)
        let publicOnly = option != .privateAndPublic
        if !(publicOnly || eip1581) || (option == .extendedPublic && (eip1581 || (isV2 && path.isEmpty))) {
            throw CardStatus(.conditionsNotSatisfied)
        }
        let node = try deriveKey(at: path)
        var fields: [TLV] = []
        switch option {
        case .privateAndPublic:
            fields.append(TLV(tag: 0x81, value: node.key.revealedBytes()))
        case .publicOnly:
            fields.append(TLV(tag: 0x80, value: node.key.publicKey.uncompressed))
        case .extendedPublic:
            fields.append(TLV(tag: 0x80, value: node.key.publicKey.uncompressed))
            fields.append(TLV(tag: 0x82, value: isV2 ? node.chainCode : Array(derivationOutput[32..<64])))
        }
        if makeCurrent { state.keyPath = path }
        return .secure(TLV(tag: 0xA1, children: fields).encoded())
    }
}
