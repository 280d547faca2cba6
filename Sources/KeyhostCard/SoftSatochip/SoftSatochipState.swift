/// Everything a Satochip keeps in persistent memory. Session state (secure channel keys, PIN verified, the key
/// GET EXTENDED KEY loaded) is not here: it goes on SELECT or power loss, as on the real card.
///
/// This is a test card: the authentikey, seed-derived master key, PIN and PUK are stored in clear.
public struct SoftSatochipState: Codable, Equatable, Sendable {
    /// The authentikey (private, 32 bytes): drawn once when the card is made, as the applet does in its constructor.
    public var authentikey: [UInt8]
    /// The card's CPLC data (what GET DATA 9F7F answers before the applet is selected); its SHA-1 names the card.
    public var cplc: [UInt8]
    /// The device certificate (DER) for the authentikey, signed by the card's CA.
    public var certificate: [UInt8]
    public var setupDone: Bool
    /// PIN 0 ("Muscle00" until SETUP) and its tries.
    public var pin: [UInt8]
    public var pinLimit: Int
    public var pinTries: Int
    /// PUK 0 (nil until SETUP) and its tries.
    public var puk: [UInt8]?
    public var pukLimit: Int
    public var pukTries: Int
    /// BIP32 master key and chain code (nil: not seeded).
    public var masterKey: [UInt8]?
    public var masterChainCode: [UInt8]?
    public var label: [UInt8]

    public var isSeeded: Bool { masterKey != nil }

    /// The first field outside the applet's limits, as "field 'x': problem", or nil when all are within. The file is
    /// input like any other: a value the applet could never have written would otherwise reach a byte of an answer.
    public func problem() -> String? {
        func field(_ name: String, _ problem: String) -> String { "field '\(name)' \(problem)" }
        if authentikey.count != 32 { return field("authentikey", "has \(authentikey.count) bytes; expected 32") }
        if cplc.count != SoftSatochip.cplcLength { return field("cplc", "has \(cplc.count) bytes; expected \(SoftSatochip.cplcLength)") }
        if certificate.count > SatochipCertificate.maximumSize {
            return field("certificate", "has \(certificate.count) bytes; at most \(SatochipCertificate.maximumSize)")
        }
        if !Satochip.pinLengths.contains(pin.count) { return field("pin", "has \(pin.count) bytes; a PIN has 4 to 16") }
        if let puk, !Satochip.pinLengths.contains(puk.count) { return field("puk", "has \(puk.count) bytes; a PUK has 4 to 16") }
        if setupDone && puk == nil { return field("puk", "is missing on a card that is set up") }
        for (name, limit, tries) in [("pin", pinLimit, pinTries), ("puk", pukLimit, pukTries)] {
            if !(1...127).contains(limit) { return field("\(name)Limit", "is \(limit); expected 1 to 127") }
            if !(0...limit).contains(tries) { return field("\(name)Tries", "is \(tries); expected 0 to \(limit)") }
        }
        if let key = masterKey, key.count != 32 { return field("masterKey", "has \(key.count) bytes; expected 32") }
        if (masterKey == nil) != (masterChainCode == nil) { return field("masterChainCode", "must be set exactly when masterKey is") }
        if let chain = masterChainCode, chain.count != 32 { return field("masterChainCode", "has \(chain.count) bytes; expected 32") }
        if label.count > Satochip.maxLabelLength { return field("label", "has \(label.count) bytes; at most \(Satochip.maxLabelLength)") }
        return nil
    }
}
