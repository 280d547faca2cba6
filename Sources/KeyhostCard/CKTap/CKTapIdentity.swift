/// A tap card's identity from SELECT of Coinkite's AID (its answer is a status), for `CardIdentification`:
/// TAPSIGNER or SATSCARD by the status's `tapsigner` flag, and its state in words.
public enum CKTapIdentity {
    public static let probe: CardIdentification.Probe = { channel in
        let client = CKTapCommandSet(channel: channel)
        let status: CKTapStatus
        do {
            status = try client.select()
        } catch let error as CKTapError {
            // No tap applet answers SELECT with a status word and no CBOR; anything else is a tap card we cannot read.
            if case .statusWord = error { return nil }
            throw error
        }
        return CardIdentity(family: status.isTapsigner ? .tapsigner : .satscard, version: status.version, state: state(status))
    }

    /// "blank", "ready", "slot 3 of 10 sealed" (the card's slot numbers, from 0), "all 10 slots used", ….
    public static func state(_ status: CKTapStatus, sealed: Bool? = nil) -> String {
        var words: String
        if status.isTapsigner {
            words = status.path == nil ? "blank" : "ready"
        } else if status.activeSlot >= status.numSlots {
            words = "all \(status.numSlots) slots used"
        } else if status.blankedAddress == nil {
            words = "slot \(status.activeSlot) of \(status.numSlots) unused"
        } else {
            let seal = sealed.map { $0 ? "sealed" : "unsealed" } ?? "sealed"
            words = "slot \(status.activeSlot) of \(status.numSlots) \(seal)"
        }
        if status.authDelay > 0 { words += ", \(status.authDelay) s CVC back-off" }
        if status.tampered { words += ", TAMPERED" }
        return words
    }
}
