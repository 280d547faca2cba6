import KeyhostCrypto

/// What `status` (and SELECT) tell about a card.
public struct CKTapStatus: Equatable, Sendable {
    public enum Product: String, Sendable { case tapsigner = "TAPSIGNER", satscard = "SATSCARD", satschip = "SATSCHIP" }

    public var protocolVersion: Int
    /// The applet's version, e.g. "1.0.3".
    public var version: String
    /// Block height at the card's birth.
    public var birth: Int?
    public var product: Product
    public var isTestnet: Bool
    /// SATSCARD: the slot in use and how many there are (a TAPSIGNER has one).
    public var activeSlot: Int
    public var numSlots: Int
    /// SATSCARD: the current slot's address with its middle blanked (`bc1q…___…`), absent while the slot is unused.
    public var blankedAddress: String?
    /// TAPSIGNER: the derivation in effect, absent until `new`.
    public var path: [UInt32]?
    public var numBackups: Int?
    public var cardPublicKey: PublicKey
    public var cardNonce: [UInt8]
    /// Seconds of `wait` needed before the card checks a CVC again (0 when not rate limited).
    public var authDelay: Int
    public var tampered: Bool

    public var isTapsigner: Bool { product != .satscard }
    /// cktap's human identifier of the card.
    public var cardIdent: String { CKTap.cardIdent(cardPublicKey.compressed) }

    init(_ answer: CKTapCBOR, command: String) throws {
        let f = try CKTapFields(answer, command: command)
        protocolVersion = try f.int("proto", range: 0...255)
        guard protocolVersion == CKTap.protocolVersion else { throw f.fail("protocol version \(protocolVersion) is not the 1 this client speaks") }
        version = try f.text("ver", max: 16)
        birth = try f.optionalInt("birth", range: 0...Int(Int32.max))
        isTestnet = try f.flag("testnet")
        let tapsigner = try f.flag("tapsigner")
        product = tapsigner ? (try f.flag("satschip") || !f.has("num_backups") ? .satschip : .tapsigner) : .satscard
        if tapsigner {
            activeSlot = 0
            numSlots = 1
            path = f.has("path") ? try f.path("path") : nil
            if let p = path, p.count > CKTap.maxDerivePathDepth { throw f.fail("field 'path' has \(p.count) components; a card keeps at most \(CKTap.maxDerivePathDepth)") }
            numBackups = try f.optionalInt("num_backups", range: 0...127)
        } else {
            guard let slots = f.map["slots"]?.arrayValue, slots.count == 2, let active = slots[0].int, let total = slots[1].int,
                  (1...255).contains(total), (0...total).contains(active) else {
                throw f.fail("field 'slots' is not [active, total] with 0 <= active <= total <= 255")
            }
            activeSlot = active
            numSlots = total
            blankedAddress = try f.optionalText("addr", max: 90)
        }
        cardPublicKey = try f.publicKey("pubkey")
        cardNonce = try f.bytes("card_nonce", count: CKTap.cardNonceSize)
        authDelay = try f.optionalInt("auth_delay", range: 0...3600) ?? 0
        tampered = try f.flag("tampered")
    }
}
