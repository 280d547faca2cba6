import KeyhostCard
import KeyhostCrypto

/// Setting a card up and wiping it.
extension CardSession {
    /// INIT a blank card (`s:init{}`, `keyhost card init`): a 3.x card takes the pairing secret derived from
    /// `pairingPassword`; without `duress` the command set sends six random digits nobody knows, so the PIN
    /// never opens the duress wallet (see DuressPIN). Selects again afterwards (the card has new keys) unless not
    /// `reselect`, for a caller that must tell a failed INIT from a failure after it.
    public func initialize(_ card: KeycardCommandSet, pin: SecretBytes, puk: SecretBytes, pairingPassword: SecretBytes?,
                           duress: SecretBytes?, pinRetries: Int?, pukRetries: Int?, reselect: Bool = true) throws {
        let info = try info(card)
        var secret: SecretBytes?
        if info.secureChannelVersion == .v1 {
            guard let pairingPassword else {
                throw KeycardError.invalidArgument("applet 3.x cards need a pairing password at INIT (they pair with it)")
            }
            secret = try PairingSecret.derive(password: pairingPassword)
        }
        try card.initialize(pin: pin.text, puk: puk.text, pairingSecret: secret, pinRetries: pinRetries, pukRetries: pukRetries,
                            alternatePIN: duress.map { $0.text })
        if reselect { try select(card) }
    }

    /// FACTORY RESET, then forget this host's pairing with the card and select it again (blank now).
    public func factoryReset(_ card: KeycardCommandSet) throws {
        let uid = card.applicationInfo?.instanceUID
        try card.factoryReset()
        if let uid { try store.remove(uid: uid) }
        try select(card)
    }
}
