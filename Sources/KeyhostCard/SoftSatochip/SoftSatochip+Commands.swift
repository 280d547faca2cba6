import KeyhostCrypto

/// The applet's command handlers: same checks in the same order, same status words.
extension SoftSatochip {
    func requirePIN() throws {
        guard pinVerified else { throw fail(0x9C06) }
    }

    /// OwnerPIN.check as the applet uses it: blocked → 9C0C; wrong → 63C0 + tries left (the try is spent first).
    func checkPIN(_ candidate: ArraySlice<UInt8>) throws {
        guard Satochip.pinLengths.contains(candidate.count) else { throw fail(0x9C0F) }
        guard state.pinTries > 0 else { throw fail(0x9C0C) }
        guard Array(candidate) == state.pin else {
            state.pinTries -= 1
            pinVerified = false
            throw fail(0x63C0 + UInt16(state.pinTries))
        }
        state.pinTries = state.pinLimit
    }

    /// A length-prefixed PIN field at `offset`, checked against the PIN policy (4...16 bytes).
    func lengthPrefixed(_ data: [UInt8], at offset: inout Int) throws -> [UInt8] {
        guard offset < data.count else { throw fail(0x9C0F) }
        let size = Int(data[offset])
        offset += 1
        guard Satochip.pinLengths.contains(size), offset + size <= data.count else { throw fail(0x9C0F) }
        defer { offset += size }
        return Array(data[offset..<(offset + size)])
    }

    func setup(_ apdu: CommandAPDU) throws -> [UInt8] {
        let data = apdu.data
        var offset = 0
        guard !data.isEmpty else { throw fail(0x9C0F) }
        let defaultSize = Int(data[0])
        offset = 1
        guard Satochip.pinLengths.contains(defaultSize), offset + defaultSize <= data.count else { throw fail(0x9C0F) }
        try checkPIN(data[offset..<(offset + defaultSize)])
        offset += defaultSize
        guard offset + 2 <= data.count else { throw fail(0x9C0F) }
        let pinTries = Int(data[offset]), pukTries = Int(data[offset + 1])
        offset += 2
        let pin = try lengthPrefixed(data, at: &offset)
        let puk = try lengthPrefixed(data, at: &offset)
        guard offset + 2 <= data.count else { throw fail(0x9C0F) }
        offset += 2
        _ = try lengthPrefixed(data, at: &offset)  // PIN 1 and PUK 1: checked, unused
        _ = try lengthPrefixed(data, at: &offset)
        // OwnerPIN takes a try limit of 1...127 (a signed byte); the applet would throw on 0.
        guard (1...127).contains(pinTries), (1...127).contains(pukTries) else { throw fail(0x9C0F) }
        state.pin = pin; state.pinLimit = pinTries; state.pinTries = pinTries
        state.puk = puk; state.pukLimit = pukTries; state.pukTries = pukTries
        state.setupDone = true
        pinVerified = false
        return []
    }

    func verifyPIN(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        try checkPIN(apdu.data[...])
        pinVerified = true
        return []
    }

    func changePIN(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        guard apdu.data.count >= 4 else { throw fail(0x9C0F) }
        var offset = 0
        let old = try lengthPrefixed(apdu.data, at: &offset)
        let new = try lengthPrefixed(apdu.data, at: &offset)
        try checkPIN(old[...])
        state.pin = new
        pinVerified = false
        return []
    }

    func unblockPIN(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard state.pinTries == 0 else { throw fail(0x9C03) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        guard Satochip.pinLengths.contains(apdu.data.count) else { throw fail(0x9C0F) }
        guard state.pukTries > 0, let puk = state.puk else { throw fail(0x9C0C) }
        guard apdu.data == puk else {
            state.pukTries -= 1
            throw fail(0x63C0 + UInt16(state.pukTries))
        }
        state.pukTries = state.pukLimit
        state.pinTries = state.pinLimit
        return []
    }

    func cardLabel(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        switch apdu.p2 {
        case 0x00:
            guard let size = apdu.data.first else { state.label = []; return [] }
            guard Int(size) <= apdu.data.count, Int(size) <= Satochip.maxLabelLength, 1 + Int(size) <= apdu.data.count else { throw fail(0x9C0F) }
            state.label = Array(apdu.data[1..<(1 + Int(size))])
            return []
        case 0x01:
            return [UInt8(state.label.count)] + state.label
        default:
            throw fail(0x9C11)
        }
    }

    func importSeed(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        guard !state.isSeeded else { throw fail(0x9C17) }
        let size = Int(apdu.p1)
        guard size <= 64, apdu.data.count >= size else { throw fail(0x6700) }
        let node = Hash.hmacSHA512(key: Array("Bitcoin seed".utf8), data: Array(apdu.data.prefix(size)))
        state.masterKey = Array(node[0..<32])
        state.masterChainCode = Array(node[32..<64])
        return try authentikeyAnswer()
    }

    func resetSeed(_ apdu: CommandAPDU) throws -> [UInt8] {
        let size = Int(apdu.p1)
        guard apdu.data.count >= size else { throw fail(0x6700) }
        try checkPIN(apdu.data[0..<size])
        guard state.isSeeded else { throw fail(0x9C14) }
        state.masterKey = nil
        state.masterChainCode = nil
        loadedKey = nil
        pinVerified = false
        return []
    }

    func getExtendedKey(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        guard state.isSeeded, let masterKey = state.masterKey, let chainCode = state.masterChainCode else { throw fail(0x9C14) }
        let depth = Int(apdu.p1)
        guard depth <= Satochip.maxDepth else { throw fail(0x9C10) }
        guard apdu.data.count >= 4 * depth else { throw fail(0x9C0F) }
        var indexes: [UInt32] = []
        for level in 0..<depth {
            indexes.append(apdu.data[(4 * level)..<(4 * level + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        guard let masterPrivate = try? PrivateKey(bytes: masterKey),
              let node = try? BIP32.derive(BIP32.Node(key: masterPrivate, chainCode: chainCode), indexes) else { throw fail(0x9C0E) }
        let key = node.key
        loadedKey = key
        var answer = node.chainCode + [0x00, 0x20] + Array(key.publicKey.uncompressed[1..<33])
        let selfSig = try key.sign(digest: Hash.sha256(answer)).der
        answer += [0x00, UInt8(selfSig.count)] + selfSig
        let authSig = try authentikeyPrivate().sign(digest: Hash.sha256(answer)).der
        return answer + [0x00, UInt8(authSig.count)] + authSig
    }

    func signTransactionHash(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        guard apdu.p1 == 0xFF else { throw fail(0x9C10) }  // single-key slots are not emulated: no key there
        guard apdu.data.count >= 32 else { throw fail(0x6700) }
        guard state.isSeeded else { throw fail(0x9C14) }
        guard let key = loadedKey else { throw fail(0x9C13) }
        return try key.sign(digest: Array(apdu.data.prefix(32))).der
    }

    func exportCertificate(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        return try SoftSatochipFamilyCard.exportCertificate(apdu, certificate: state.certificate)
    }

    func challengeResponse(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        return try SoftSatochipFamilyCard.challengeResponse(apdu, authentikey: try authentikeyPrivate(), random: random)
    }
}
