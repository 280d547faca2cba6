/// Everything a software tap card keeps across power cycles, as its state file holds it.
/// The file is a test card's: its keys, CVC and backup key are in clear.
public struct SoftCKTapState: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable { case tapsigner, satscard }

    /// One key slot (a TAPSIGNER has one).
    public struct Slot: Codable, Equatable, Sendable {
        /// The card's master private key for the slot; nil while unused.
        public var masterKey: [UInt8]?
        /// The caller's entropy mixed into the key.
        public var chainCode: [UInt8]?
        /// The derivation in effect (SATSCARD: always m/0).
        public var path: [UInt32]
        public var sealed: Bool

        public var isUsed: Bool { masterKey != nil }
        public static let unused = Slot(masterKey: nil, chainCode: nil, path: [], sealed: true)
    }

    public var kind: Kind
    public var version: String
    public var birth: Int
    public var testnet: Bool
    public var cardKey: [UInt8]
    /// Batch then root certificate: 65-byte recoverable signatures.
    public var certificateChain: [[UInt8]]
    public var cvc: [UInt8]
    /// TAPSIGNER: the backup key printed on the card.
    public var backupKey: [UInt8]?
    public var numBackups: Int
    public var activeSlot: Int
    public var slots: [Slot]
    /// Wrong CVCs in a row; from the third on, each sets the delay again.
    public var authFailures: Int
    /// Seconds of `wait` still owed before the card checks a CVC.
    public var authDelay: Int
}
