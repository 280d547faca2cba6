/// SETUP, the PIN commands and the card label, as the SeedKeeper applet handles them (its SETUP ignores the
/// default PIN; a PUK that runs out of tries resets the card to factory).
extension SoftSeedKeeper {
    func requirePIN() throws {
        guard pinVerified else { throw fail(0x9C06) }
    }

    /// Logger.createLog: a new record (ids -1 print as FFFF, as the applet's shorts do).
    func log(_ ins: UInt8, _ id1: Int, _ id2: Int, _ result: UInt16) {
        SoftSeedKeeperLog.create(&state, SeedKeeperLogEntry(instruction: ins, id1: UInt16(truncatingIfNeeded: id1), id2: UInt16(truncatingIfNeeded: id2), result: result))
    }

    func log(_ ins: UInt8, _ result: UInt16) { log(ins, -1, -1, result) }

    /// Logger.updateLog: rewrites the latest record.
    func updateLog(_ ins: UInt8, _ id1: Int, _ id2: Int, _ result: UInt16) {
        SoftSeedKeeperLog.update(&state, SeedKeeperLogEntry(instruction: ins, id1: UInt16(truncatingIfNeeded: id1), id2: UInt16(truncatingIfNeeded: id2), result: result))
    }

    func updateLog(_ ins: UInt8, _ result: UInt16) { updateLog(ins, -1, -1, result) }

    /// A length-prefixed PIN field at `offset`, checked against the PIN policy (4...16 bytes).
    func lengthPrefixed(_ data: [UInt8], at offset: inout Int) throws -> [UInt8] {
        guard offset < data.count else { throw fail(0x9C0F) }
        let size = Int(data[offset])
        offset += 1
        guard Satochip.pinLengths.contains(size), offset + size <= data.count else { throw fail(0x9C0F) }
        defer { offset += size }
        return Array(data[offset..<(offset + size)])
    }

    /// Skips a length-prefixed field the applet ignores (the default PIN, PIN 1, PUK 1).
    func skipField(_ data: [UInt8], at offset: inout Int) throws {
        guard offset < data.count else { throw fail(0x9C0F) }
        offset += 1 + Int(data[offset])
        guard offset <= data.count else { throw fail(0x9C0F) }
    }

    func setup(_ apdu: CommandAPDU) throws -> [UInt8] {
        let data = apdu.data
        var offset = 0
        try skipField(data, at: &offset)  // the default PIN: not checked by this applet
        guard offset + 2 <= data.count else { throw fail(0x9C0F) }
        let pinTries = Int(data[offset]), pukTries = Int(data[offset + 1])
        offset += 2
        let pin = try lengthPrefixed(data, at: &offset)
        let puk = try lengthPrefixed(data, at: &offset)
        guard offset + 2 <= data.count else { throw fail(0x9C0F) }
        offset += 2
        try skipField(data, at: &offset)
        try skipField(data, at: &offset)
        // OwnerPIN objects are made on the first SETUP only: their try limits stay after a factory reset.
        if state.puk == nil {
            guard (1...127).contains(pinTries), (1...127).contains(pukTries) else { throw fail(0x9C0F) }
            state.pinLimit = pinTries
            state.pukLimit = pukTries
        }
        state.pin = pin; state.pinTries = state.pinLimit
        state.puk = puk; state.pukTries = state.pukLimit
        state.nextID = 0
        state.setupDone = true
        pinVerified = false
        return []
    }

    /// OwnerPIN.check as the applet uses it: blocked → 9C0C; wrong → 63C0 + tries left, logged.
    func checkPIN(_ candidate: [UInt8], ins: UInt8) throws {
        guard state.pinTries > 0 else { throw fail(0x9C0C) }
        guard candidate == state.pin else {
            state.pinTries -= 1
            pinVerified = false
            let sw = 0x63C0 + UInt16(state.pinTries)
            log(ins, sw)
            throw fail(sw)
        }
        state.pinTries = state.pinLimit
    }

    func verifyPIN(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        guard Satochip.pinLengths.contains(apdu.data.count) else { throw fail(0x9C0F) }
        try checkPIN(apdu.data, ins: apdu.ins)
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
        try checkPIN(old, ins: apdu.ins)
        state.pin = new
        state.pinTries = state.pinLimit
        pinVerified = false  // OwnerPIN.update clears the validated flag
        return []
    }

    func unblockPIN(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        guard let puk = state.puk else { throw fail(0x9C10) }
        guard state.pinTries == 0 else { throw fail(0x9C03) }
        guard Satochip.pinLengths.contains(apdu.data.count) else { throw fail(0x9C0F) }
        guard state.pukTries > 0 else { throw fail(0x9C0C) }
        guard apdu.data == puk else {
            state.pukTries -= 1
            log(apdu.ins, 0x63C0 + UInt16(state.pukTries))
            if state.pukTries == 0 {
                resetToFactory()
                throw fail(0xFF00)
            }
            throw fail(0x63C0 + UInt16(state.pukTries))
        }
        state.pukTries = state.pukLimit
        state.pinTries = state.pinLimit
        return []
    }

    /// The applet's resetToFactory: secrets and label erased, PIN back to the default, SETUP needed again; the
    /// log keeps its records and gains one for the reset.
    func resetToFactory() {
        log(0xFF, 0x0000)
        state.secrets = []
        state.label = []
        state.pin = Satochip.defaultPIN
        state.setupDone = false
        pinVerified = false
        updateLog(0xFF, 0x9000)
    }

    func cardLabel(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        switch apdu.p2 {
        case 0x00:
            guard let size = apdu.data.first else { return [] }
            guard Int(size) <= apdu.data.count - 1, Int(size) <= Satochip.maxLabelLength else { throw fail(0x9C0F) }
            state.label = Array(apdu.data[1..<(1 + Int(size))])
            return []
        case 0x01:
            return [UInt8(state.label.count)] + state.label
        default:
            throw fail(0x9C11)
        }
    }
}
