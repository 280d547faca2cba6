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
        try card.initialize(pin: pin, puk: puk, pairingSecret: secret, pinRetries: pinRetries, pukRetries: pukRetries, alternatePIN: duress)
        if reselect { try select(card) }
    }

    /// FACTORY RESET, then forget this host's pairing with the card and select it again (blank now).
    public func factoryReset(_ card: KeycardCommandSet) throws {
        let uid = card.applicationInfo?.instanceUID
        try card.factoryReset()
        if let uid { try store.remove(uid: uid) }
        try select(card)
    }

    /// Proves that a 4.x card is the card its identity certificate names, before a confirmation by that identity key is
    /// believed: the certificate must chain to a trusted CA, and the card must hold the identity key (it signs the
    /// secure channel handshake). SELECT's answer alone proves neither: any card can show any certificate. Selects the
    /// card again afterwards. Throws `untrusted_card` (with the CA's key when it is unknown).
    public func proveIdentity(_ card: KeycardCommandSet) throws {
        let info = try info(card)
        guard info.secureChannelVersion == .v2 else { return }
        do {
            try openSecureChannel(card)
        } catch let error as KeycardError {
            switch error {
            case .unknownCA, .untrustedCard: break
            default: throw error
            }
            let mapped = frontEnd.worded(CardServiceError.from(keycard: error, command: "OPEN SECURE CHANNEL"))
            throw CardServiceError(kind: "untrusted_card", "the card's identity key is unverified, so it cannot confirm which card this is; "
                                   + "nothing was done. \(mapped.text)", command: mapped.command, caKey: mapped.caKey)
        }
        try select(card)
    }
}
