import KeyhostCard

/// Freeing the pairing slots other hosts hold (`s:unpair_others`, `keyhost card unpair --others`): one rule for both,
/// only the slots that were in use are freed and reported (UNPAIR of a free slot succeeds too, so it cannot tell them).
extension CardSession {
    /// The 3.x card's pairing slots in use, probed with OPEN SECURE CHANNEL on each (see
    /// `KeycardCommandSet.occupiedPairingSlots`); the probes drop any open secure channel, so the card is SELECTed
    /// again after them, and before them too when a channel was open (its free-slot count may be stale by then).
    ///
    /// A session on the 3.2 applet's temporary slot (0xFF) is never SELECTed: the applet erases that pairing on every
    /// SELECT, and the session could not open its channel again. It needs no fresh count either: it holds that slot
    /// because none was free when it paired, and it took none since.
    public func occupiedPairingSlots(_ card: KeycardCommandSet) throws -> [Int] {
        let temporary = card.pairing?.index == Pairing.ephemeralIndex && card.applicationInfo != nil
        if !temporary && (card.isSecureChannelOpen || card.applicationInfo == nil) { try select(card) }
        setPINVerified(false)
        let slots = try card.occupiedPairingSlots()
        if !temporary { try select(card) }
        return slots
    }

    /// UNPAIR every slot in use but this session's own (3.x, PIN verified) and returns them, in order.
    ///
    /// `occupied` are the slots found by `occupiedPairingSlots` before the channel was opened (the command line
    /// probes first). With nil (Lua, whose session is open already) they are probed now; that resets the secure
    /// channel, so it is opened again with the session's own pairing and the PIN verified again, from `pin`, else
    /// the front end's PIN input (environment variable, then prompt): the session keeps no PIN to replay.
    public func unpairOthers(_ card: KeycardCommandSet, occupied: [Int]?, pin: [UInt8]?) throws -> [Int] {
        guard let own = card.pairing else { throw KeycardError.notPaired }
        guard card.isSecureChannelOpen else { throw KeycardError.secureChannelNotOpen(.unpair) }
        // The PIN proved once in this session is what allows asking for it again after the probe.
        guard pinVerified else { throw KeycardError.conditionsNotSatisfied(.unpair) }
        var slots: [Int]
        if let occupied {
            slots = occupied
        } else {
            slots = try occupiedPairingSlots(card)
            card.pairing = own
            try card.openSecureChannel()
            try verifyPIN(card, try frontEnd.pin.resolve(pin))
        }
        slots.removeAll { $0 == Int(own.index) }
        for slot in slots { try card.unpair(index: UInt8(slot)) }
        return slots
    }
}
