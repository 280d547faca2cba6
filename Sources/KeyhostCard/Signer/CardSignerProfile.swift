/// Which card family a signer speaks to and what it can do, for the refusals that tell a user what to use instead.
public struct CardSignerProfile: Sendable, Equatable {
    /// What the card can do as a signer.
    public struct Abilities: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Public keys and chain codes below the master (account xpubs).
        public static let extendedKeys = Abilities(rawValue: 1 << 0)
        /// The master key's own chain code (a master xpub).
        public static let masterExtendedKey = Abilities(rawValue: 1 << 1)
        /// ECDSA signatures by keys at paths.
        public static let ecdsa = Abilities(rawValue: 1 << 2)
        /// BIP340 Schnorr signatures, with a taproot tweak.
        public static let schnorr = Abilities(rawValue: 1 << 3)
    }

    /// The family's name as users know it ("Keycard", "Satochip", "TAPSIGNER").
    public let family: String
    /// The applet or firmware version, as the card gave it.
    public let version: String
    public let abilities: Abilities

    public init(family: String, version: String, abilities: Abilities) {
        self.family = family
        self.version = version
        self.abilities = abilities
    }

    /// "Keycard 3.2", for messages.
    public var name: String { version.isEmpty ? family : "\(family) \(version)" }
}
