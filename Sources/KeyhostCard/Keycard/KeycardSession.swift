import KeyhostCrypto

/// The usual start of a session: SELECT, pair (or reuse a pairing), open the secure channel, verify the PIN.
public enum KeycardSession {
    /// Returns the ready command set and, for v1, the pairing used (new or reused) so the caller can persist it.
    public static func open(channel: CardChannel, pin: String?, pairing: Pairing? = nil, pairingPassword: String? = nil,
                            random: RandomSource = SystemRandom(),
                            trustedCAKeys: [PublicKey] = IdentityCertificate.defaultCAKeys) throws -> (KeycardCommandSet, Pairing?) {
        let card = KeycardCommandSet(channel: channel, random: random, trustedCAKeys: trustedCAKeys)
        let info = try card.select()
        guard info.isInitialized else { throw KeycardError.notInitialized }
        if info.secureChannelVersion == .v1 {
            if let pairing {
                card.pairing = pairing
            } else if let pairingPassword {
                try card.pair(password: pairingPassword)
            } else {
                throw KeycardError.notPaired
            }
        }
        try card.openSecureChannel()
        if let pin { try card.verifyPIN(pin) }
        return (card, card.pairing)
    }
}
