import KeyhostCrypto

extension SatochipCommandSet {
    static func checkPIN(_ pin: SecretBytes, _ what: String) throws {
        guard Satochip.pinLengths.contains(pin.count) else {
            throw SatochipError.invalidArgument("a \(what) is 4 to 16 bytes, this one has \(pin.count)")
        }
    }

    /// SETUP: sets PIN 0 and PUK 0 (PIN 1 and PUK 1, which Satochip does not use, get random values).
    public func setup(pin: SecretBytes, puk: SecretBytes, pinTries: UInt8 = 5, pukTries: UInt8 = 5) throws {
        try Self.checkPIN(pin, "PIN"); try Self.checkPIN(puk, "PUK")
        guard pinTries >= 1, pukTries >= 1 else { throw SatochipError.invalidArgument("PIN and PUK tries must be at least 1") }
        let pin1 = random.bytes(16), puk1 = random.bytes(16)
        var data: [UInt8] = [UInt8(Satochip.defaultPIN.count)] + Satochip.defaultPIN
        data += [pinTries, pukTries, UInt8(pin.count)] + pin.revealedBytes() + [UInt8(puk.count)] + puk.revealedBytes()
        data += [pinTries, pukTries, UInt8(pin1.count)] + pin1 + [UInt8(puk1.count)] + puk1
        data += [0x00, 0x20, 0x00, 0x00, 0x01, 0x01, 0x01]  // secure memory 32, RFU, the three ACL bytes
        try send(.setup, data: data)
        status?.isSetupDone = true
    }

    /// VERIFY PIN 0. A wrong PIN throws `.wrongPIN(triesLeft:)`, a blocked one `.pinBlocked`.
    public func verifyPIN(_ pin: SecretBytes) throws {
        try Self.checkPIN(pin, "PIN")
        try send(.verifyPIN, data: pin.revealedBytes())
    }

    /// CHANGE PIN 0 (the card logs the PIN out afterwards).
    public func changePIN(old: SecretBytes, new: SecretBytes) throws {
        try Self.checkPIN(old, "PIN"); try Self.checkPIN(new, "new PIN")
        try send(.changePIN, data: [UInt8(old.count)] + old.revealedBytes() + [UInt8(new.count)] + new.revealedBytes())
    }

    /// UNBLOCK PIN 0 with the PUK (the protocol 0.12 form: the PUK alone; the PIN keeps its value).
    public func unblockPIN(puk: SecretBytes) throws {
        try Self.checkPIN(puk, "PUK")
        try send(.unblockPIN, data: puk.revealedBytes())
    }

    /// LOGOUT ALL: the PIN must be verified again.
    public func logout() throws { try send(.logoutAll) }
}
