import KeyhostCrypto

extension SoftKeycard {
    func currentPINTries(_ credentials: SoftKeycardState.Credentials) -> Int {
        usingAlternatePIN ? credentials.alternatePINTries : credentials.pinTries
    }

    static func allDigits(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.allSatisfy { (0x30...0x39).contains($0) } }

    /// INIT data after decryption: PIN (6) ‖ PUK (12) ‖ [pairing secret (32), v1] ‖ [PIN limit, PUK limit ‖ [alt PIN (6)]].
    private func adoptCredentials(_ data: [UInt8], secretLength: Int) throws {
        let base = Keycard.pinLength + Keycard.pukLength + secretLength
        guard [base, base + 2, base + 8].contains(data.count), SoftKeycard.allDigits(data[0..<18]) else { throw CardStatus(.wrongData) }
        var pinLimit = 3, pukLimit = 5
        let pin = String(decoding: data[0..<6], as: UTF8.self)
        let puk = String(decoding: data[6..<18], as: UTF8.self)
        // The applet always has an alternate (duress) PIN: 3.2 defaults it to the PUK's first 6
        // digits, 4.0 to the PIN itself (so that every verification opens the duress wallet).
        var alternate: String? = isV2 ? pin : String(puk.prefix(6))
        if data.count >= base + 2 {
            pinLimit = Int(data[base]); pukLimit = Int(data[base + 1])
            guard (2...10).contains(pinLimit), (3...12).contains(pukLimit) else { throw CardStatus(.wrongData) }
            if data.count == base + 8 { alternate = String(decoding: data[(base + 2)..<(base + 8)], as: UTF8.self) }
        }
        if secretLength > 0 { state.pairingSecret = Array(data[18..<50]) }
        state.credentials = SoftKeycardState.Credentials(pin: pin, puk: puk, alternatePIN: alternate, pinLimit: pinLimit, pukLimit: pukLimit,
                                                        pinTries: pinLimit, alternatePINTries: pinLimit, pukTries: pukLimit)
    }

    /// 3.x INIT: one-shot ECDH + AES-256-CBC to the card's secure channel key.
    func initializeV1(_ apdu: CommandAPDU) throws {
        let data = apdu.data
        guard let keyLength = data.first.map(Int.init), data.count >= 1 + keyLength + 16 + 16,
              let client = try? PublicKey(bytes: Array(data[1..<(1 + keyLength)])),
              let cardKey = try? PrivateKey(bytes: state.secureChannelKey) else { throw CardStatus(.wrongData) }
        let shared = try cardKey.sharedSecretX(with: client)
        let iv = Array(data[(1 + keyLength)..<(17 + keyLength)])
        guard var plain = try? ISO9797M2.unpad(AES256CBC.decrypt(Array(data[(17 + keyLength)...]), key: shared.revealedBytes(), iv: iv)) else {
            throw CardStatus(.wrongData)
        }
        defer { wipe(&plain) }
        try adoptCredentials(plain, secretLength: 32)
        state.secureChannelKey = random.privateKey().revealedBytes()  // the applet regenerates its key pair at INIT
        state.pairingKeys = Array(repeating: nil, count: state.pairingKeys.count)
    }

    /// 4.x INIT inside the secure channel.
    func initializeV2(_ data: [UInt8]) throws {
        try adoptCredentials(data, secretLength: 0)
    }

    // MARK: Pairing (3.x)

    func pair(_ apdu: CommandAPDU) throws -> Outcome {
        guard !channelV1.isOpen else { throw CardStatus(.conditionsNotSatisfied) }
        guard apdu.data.count == 32, let secret = state.pairingSecret else { throw CardStatus(.wrongData) }
        if apdu.p1 == 0x00 {
            var slot = -1
            if apdu.p2 != PairingMode.ephemeral.rawValue, let free = state.pairingKeys.firstIndex(where: { $0 == nil }) { slot = free }
            if slot == -1 {
                if apdu.p2 == PairingMode.persistent.rawValue {
                    pendingPairing = nil
                    throw CardStatus(.fileFull)
                }
                slot = Int(Pairing.ephemeralIndex)
            }
            let challenge = random.bytes(32)
            pendingPairing = (slot, challenge)
            return .plain(Hash.sha256(secret + apdu.data) + challenge)
        }
        guard apdu.p1 == 0x01, let pending = pendingPairing else { throw CardStatus(.incorrectP1P2) }
        pendingPairing = nil
        guard Hash.sha256(secret + pending.cardChallenge) == apdu.data else { throw CardStatus(.securityStatusNotSatisfied) }
        let salt = random.bytes(32)
        let key = Hash.sha256(secret + salt)
        if pending.slot == Int(Pairing.ephemeralIndex) {
            ephemeralPairingKey = key
        } else {
            state.pairingKeys[pending.slot] = key
        }
        return .plain([try byte(pending.slot)] + salt)
    }

    func unpair(_ apdu: CommandAPDU) throws -> Outcome {
        _ = try channelV1.preprocess(apdu)
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        if apdu.p1 == Pairing.ephemeralIndex {
            ephemeralPairingKey = nil
        } else {
            guard Int(apdu.p1) < state.pairingKeys.count else { throw CardStatus(.incorrectP1P2) }
            state.pairingKeys[Int(apdu.p1)] = nil
        }
        return .none
    }

    func openSecureChannelV1(_ apdu: CommandAPDU) throws -> Outcome {
        let key: [UInt8]?
        if apdu.p1 == Pairing.ephemeralIndex {
            key = ephemeralPairingKey
        } else {
            guard Int(apdu.p1) < state.pairingKeys.count else { throw CardStatus(.incorrectP1P2) }
            key = state.pairingKeys[Int(apdu.p1)]
        }
        guard let key else { throw CardStatus(.incorrectP1P2) }
        guard let cardKey = try? PrivateKey(bytes: state.secureChannelKey) else { throw CardStatus(.unknown) }
        return .plain(try channelV1.open(clientKey: apdu.data, pairingKey: key, cardKey: cardKey, random: random))
    }

    // MARK: PIN and PUK

    /// VERIFY PIN, as the applet's verifyPIN: both PINs are checked (both counters move on a miss);
    /// when both match, the alternate (duress) PIN wins and selects the alternate chain code.
    func verifyPIN(_ data: [UInt8]) throws -> Outcome {
        guard var credentials = state.credentials else { throw CardStatus(.conditionsNotSatisfied) }
        guard data.count == Keycard.pinLength, SoftKeycard.allDigits(data[...]) else { throw CardStatus(.wrongData) }
        // Compared as bytes: no String copy of the entered PIN (one could not be wiped).
        func check(_ reference: String?, _ tries: inout Int) -> Bool {
            guard let reference, tries > 0 else { return false }
            if reference.utf8.elementsEqual(data) { tries = credentials.pinLimit; return true }
            tries -= 1
            return false
        }
        var mainTries = credentials.pinTries, altTries = credentials.alternatePINTries
        var mainOK = false, altOK = false
        mainOK = check(credentials.pin, &mainTries)
        altOK = check(credentials.alternatePIN, &altTries)
        credentials.pinTries = mainTries
        credentials.alternatePINTries = altTries
        defer { state.credentials = credentials }
        if altOK {
            usingAlternatePIN = true
            credentials.pinTries = credentials.pinLimit
            pinVerified = true
        } else if mainOK {
            usingAlternatePIN = false
            credentials.alternatePINTries = credentials.pinLimit
            pinVerified = true
        } else {
            pinVerified = false
            throw CardStatus(.verificationFailed(triesLeft: usingAlternatePIN ? altTries : mainTries))
        }
        return .none
    }

    func changeCredential(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard pinVerified, var credentials = state.credentials else { throw CardStatus(.conditionsNotSatisfied) }
        switch CredentialKind(rawValue: apdu.p1) {
        case .pin:
            guard data.count == Keycard.pinLength, SoftKeycard.allDigits(data[...]) else { throw CardStatus(.wrongData) }
            let pin = String(decoding: data, as: UTF8.self)
            if usingAlternatePIN { credentials.alternatePIN = pin; credentials.alternatePINTries = credentials.pinLimit }
            else { credentials.pin = pin; credentials.pinTries = credentials.pinLimit }
        case .puk:
            guard data.count == Keycard.pukLength, SoftKeycard.allDigits(data[...]) else { throw CardStatus(.wrongData) }
            credentials.puk = String(decoding: data, as: UTF8.self)
        case .pairingSecret where !isV2:
            guard data.count == 32 else { throw CardStatus(.wrongData) }
            state.pairingSecret = data
        default:
            throw CardStatus(.incorrectP1P2)
        }
        state.credentials = credentials
        return .none
    }

    /// UNBLOCK PIN: only while the PIN is blocked; PUK ‖ new PIN.
    func unblockPIN(_ data: [UInt8]) throws -> Outcome {
        guard var credentials = state.credentials else { throw CardStatus(.conditionsNotSatisfied) }
        guard currentPINTries(credentials) == 0 else { throw CardStatus(.conditionsNotSatisfied) }
        guard data.count == Keycard.pukLength + Keycard.pinLength, SoftKeycard.allDigits(data[...]) else { throw CardStatus(.wrongData) }
        let puk = String(decoding: data[0..<12], as: UTF8.self)
        guard credentials.pukTries > 0, puk == credentials.puk else {
            if credentials.pukTries > 0 { credentials.pukTries -= 1 }
            state.credentials = credentials
            throw CardStatus(.verificationFailed(triesLeft: credentials.pukTries))
        }
        let pin = String(decoding: data[12..<18], as: UTF8.self)
        credentials.pinTries = credentials.pinLimit
        credentials.alternatePINTries = credentials.pinLimit
        if usingAlternatePIN { credentials.alternatePIN = pin; credentials.alternatePINTries = credentials.pinLimit }
        else { credentials.pin = pin; credentials.pinTries = credentials.pinLimit }
        credentials.pukTries = credentials.pukLimit
        state.credentials = credentials
        pinVerified = true
        return .none
    }
}
