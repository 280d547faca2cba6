import KeyhostCrypto

extension KeycardCommandSet {
    /// The pairing slots in use on a 3.x card, found without a secure channel (call it right after SELECT; the
    /// card's half-opened channel is dropped by the next SELECT). UNPAIR answers 9000 for a free slot as for a
    /// used one, so it cannot tell them apart; OPEN SECURE CHANNEL can: the applet answers 6A86 for an empty slot
    /// (and for an index past its last slot) and salt ‖ IV for a used one. SELECT's free-slot count says when the
    /// indexes ran out: the (free + 1)-th 6A86 is the first index past the last slot.
    public func occupiedPairingSlots() throws -> [Int] {
        let info = try requireInfo(.openSecureChannel)
        try requireV1(.openSecureChannel)
        guard let free = info.freePairingSlots else {
            throw KeycardError.invalidResponse(.select, "no free pairing slot count to bound the slots by")
        }
        closeSecureChannel()
        let probe = random.privateKey().publicKey.uncompressed
        var used: [Int] = []
        var empty = 0
        for index in 0..<Int(Pairing.ephemeralIndex) {
            do {
                try sendPlain(.openSecureChannel, p1: UInt8(index), data: probe)
                used.append(index)
            } catch KeycardError.incorrectParameters(.openSecureChannel, _) {
                empty += 1
                if empty > free { break }
            }
        }
        return used
    }
}
