import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

/// Pairing and the secure channel: the stored pairing reused, a new one taken (and stored) when there is none,
/// the card's temporary slot when every slot is taken.
extension CardSession {
    /// Opens the secure channel; on v1 with `card.pairing`, else the stored pairing for this card.
    public func openSecureChannel(_ card: KeycardCommandSet) throws {
        let info = try info(card)
        setPINVerified(false)
        if info.secureChannelVersion == .v1 && card.pairing == nil, let uid = info.instanceUID, let stored = try store.lookup(uid: uid) {
            card.pairing = stored
        }
        try card.openSecureChannel()
    }

    /// PAIR, then records the pairing in the store at once, before anything else can fail. An ephemeral
    /// pairing (the 3.2 applet's slot 0xFF, gone at power-off) is never stored.
    public func pair(_ card: KeycardCommandSet, password: SecretBytes, mode: PairingMode, persist: Bool) throws -> Pairing {
        let info = try info(card)
        if card.isSecureChannelOpen { try select(card) }
        let secret = try PairingSecret.derive(password: password)
        let pairing = try card.pair(secret: secret, mode: mode)
        if persist, pairing.index != Pairing.ephemeralIndex, let uid = info.instanceUID {
            try store.save(uid: uid, pairing: pairing, applet: "\(info.version)")
        }
        return pairing
    }

    /// SELECT, pair or reuse the stored pairing, open the secure channel, verify the PIN (`pin`, else the front end's input).
    /// `{applet, secure_channel, pairing_index, new_pairing, instance_uid, ephemeral}` as `openChannel`.
    public func auto(_ card: KeycardCommandSet, pin: [UInt8]?, password: [UInt8]?) throws -> Record {
        let result = try openChannel(card, password: password)
        let secretPIN = try frontEnd.pin.resolve(pin)
        try verifyPIN(card, secretPIN)
        return result
    }

    /// SELECT, pair or reuse the stored pairing (3.x), open the secure channel: `auto` without the PIN.
    /// `{applet, secure_channel}`, on 3.x with `{pairing_index, new_pairing, instance_uid}` and `ephemeral` for the temporary slot.
    public func openChannel(_ card: KeycardCommandSet, password: [UInt8]?) throws -> Record {
        let info = try select(card)
        guard info.isInitialized else { throw KeycardError.notInitialized }
        var fields: [(String, Record)] = [("applet", .string("\(info.version)")), ("secure_channel", .integer(Int64(info.secureChannelVersion.rawValue)))]
        if info.secureChannelVersion == .v1 {
            guard let uid = info.instanceUID else { throw KeycardError.invalidResponse(.select, "no instance UID to key the pairing by") }
            var reused = false
            if let stored = try store.lookup(uid: uid) {
                card.pairing = stored
                do {
                    try card.openSecureChannel()
                    reused = true
                } catch let error as KeycardError where CardSession.rejectsPairing(error) {
                    // The card no longer knows this pairing (unpaired elsewhere, reset): forget it and pair once more.
                    try store.remove(uid: uid)
                    card.pairing = nil
                    try select(card)
                }
            }
            if !reused {
                let secret = try frontEnd.pairingPassword.resolve(password)
                do {
                    let pairing = try pair(card, password: secret, mode: .persistent, persist: true)
                    frontEnd.notice?(frontEnd.slotTaken(pairing.index, freeBefore: info.freePairingSlots))
                } catch KeycardError.noFreePairingSlot where frontEnd.temporaryPairing {
                    // Every slot is taken: an ephemeral pairing still opens a channel, e.g. to unpair_others().
                    try select(card)
                    _ = try pair(card, password: secret, mode: .ephemeral, persist: false)
                    fields.append(("ephemeral", .bool(true)))
                    frontEnd.notice?("every pairing slot of the card is taken; paired through its temporary slot, for this session only")
                }
                fields.append(("new_pairing", .bool(true)))
                try card.openSecureChannel()
            } else {
                fields.append(("new_pairing", .bool(false)))
            }
            fields.append(("pairing_index", .integer(card.pairing?.index)))
            fields.append(("instance_uid", .bytes(uid)))
        } else {
            try card.openSecureChannel()
        }
        return .object(fields)
    }

    /// Whether OPEN SECURE CHANNEL / MUTUALLY AUTHENTICATE failed because the card does not know the pairing.
    public static func rejectsPairing(_ error: KeycardError) -> Bool {
        switch error {
        case .incorrectParameters(.openSecureChannel, _), .secureChannelReset, .invalidResponse(.mutuallyAuthenticate, _),
             .invalidResponse(.openSecureChannel, _), .wrongData(.openSecureChannel):
            return true
        default:
            return false
        }
    }
}
