/// Everything a Keycard keeps in persistent memory (EEPROM). Session state (secure channel keys, PIN
/// verified, pending derivation) is not here: it is lost on SELECT or power loss, as on the real card.
///
/// This is a test card: private keys, PIN and PUK are stored in clear in this structure and in its file.
public struct SoftKeycardState: Codable, Equatable, Sendable {
    public struct Credentials: Codable, Equatable, Sendable {
        public var pin: String
        public var puk: String
        /// The alternate (duress) PIN: defaults to the first 6 PUK digits on 3.2 and to the PIN on 4.0; it selects alternate keys.
        public var alternatePIN: String?
        public var pinLimit: Int
        public var pukLimit: Int
        public var pinTries: Int
        public var alternatePINTries: Int
        public var pukTries: Int
    }

    public var appletVersion: AppletVersion
    public var uid: [UInt8]
    /// Secure channel v1 static ECDH key.
    public var secureChannelKey: [UInt8]
    /// Secure channel v2 identity key and its CA certificate.
    public var identityKey: [UInt8]
    public var certificate: [UInt8]
    public var credentials: Credentials?
    public var pairingSecret: [UInt8]?
    /// One entry per persistent slot: the 32-byte pairing key, or nil when free.
    public var pairingKeys: [[UInt8]?]
    public var masterKey: [UInt8]?
    /// Nil for a non-extended key pair.
    public var masterChainCode: [UInt8]?
    public var keyUID: [UInt8]
    /// The current key path (3.x DERIVE KEY; survives power loss).
    public var keyPath: [UInt32]
    public var pinlessPath: [UInt32]
    public var publicData: [UInt8]
    /// The NDEF file (2-byte length, then the message) as far as it was written; nil or missing bytes are zeros.
    /// It lives in the NDEF applet's memory, so FACTORY RESET leaves it, as it leaves `cashData`.
    public var ndefFile: [UInt8]?
    /// The Cash applet's data (nil: none stored).
    public var cashData: [UInt8]?

    public var isInitialized: Bool { credentials != nil }
    public var freePairingSlots: Int { pairingKeys.filter { $0 == nil }.count }
}
