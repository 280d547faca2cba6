/// One secret object as the applet keeps it: the header it answers (without the id) and the secret's bytes
/// (the applet encrypts them under a card key; this test card keeps them in clear).
public struct SoftSeedKeeperSecret: Codable, Equatable, Sendable {
    public var id: Int
    /// `[type | origin | export | nb_plain | nb_secure | counter | fingerprint(4) | subtype | RFU | label_size | label]`.
    public var header: [UInt8]
    public var secret: [UInt8]
    /// Bytes the object takes in the applet's memory (header, then the secret padded to AES blocks).
    public var size: Int

    /// The object's size for a secret of `count` bytes under `header` (PKCS#7 always adds 1...16 bytes).
    static func objectSize(header: Int, secret count: Int) -> Int { header + count + 16 - count % 16 }
}

/// Everything a SeedKeeper keeps in persistent memory. Session state (secure channel, PIN verified, the listing
/// and log iterators) is not here: it goes on SELECT or power loss. The lock of a multi-step import or export is
/// not here either: the card object keeps it across power loss, not across a reload of this file.
///
/// This is a test card: the authentikey, PIN, PUK and secrets are stored in clear.
public struct SoftSeedKeeperState: Codable, Equatable, Sendable {
    public var authentikey: [UInt8]
    public var cplc: [UInt8]
    public var certificate: [UInt8]
    public var setupDone: Bool
    public var pin: [UInt8]
    public var pinLimit: Int
    public var pinTries: Int
    /// PUK (nil until the first SETUP, which also fixes both try limits for the card's life, as OwnerPIN does).
    public var puk: [UInt8]?
    public var pukLimit: Int
    public var pukTries: Int
    public var label: [UInt8]
    /// Secrets in creation order (the applet lists the newest first).
    public var secrets: [SoftSeedKeeperSecret]
    public var nextID: Int
    /// The applet's object memory (0xFFF bytes unless installed with another size).
    public var memorySize: Int
    /// The log ring: 100 records of 7 bytes, the next one written at `logHead`.
    public var logs: [UInt8]
    public var logHead: Int
    public var logsTotal: Int

    /// The first field outside the applet's limits, as "field 'x': problem", or nil when all are within.
    public func problem() -> String? {
        func field(_ name: String, _ problem: String) -> String { "field '\(name)' \(problem)" }
        if authentikey.count != 32 { return field("authentikey", "has \(authentikey.count) bytes; expected 32") }
        if cplc.count != SoftSeedKeeper.cplcLength { return field("cplc", "has \(cplc.count) bytes; expected \(SoftSeedKeeper.cplcLength)") }
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
        if label.count > Satochip.maxLabelLength { return field("label", "has \(label.count) bytes; at most \(Satochip.maxLabelLength)") }
        if !(256...0x7FFF).contains(memorySize) { return field("memorySize", "is \(memorySize); expected 256 to 32767") }
        if !(0...0x7FFF).contains(nextID) { return field("nextID", "is \(nextID); expected 0 to 32767") }
        if logs.count != SoftSeedKeeperLog.ringSize { return field("logs", "has \(logs.count) bytes; expected \(SoftSeedKeeperLog.ringSize)") }
        if !(0..<SoftSeedKeeperLog.records).contains(logHead / SeedKeeperLogEntry.size) || logHead % SeedKeeperLogEntry.size != 0 {
            return field("logHead", "is \(logHead); expected a record offset below \(SoftSeedKeeperLog.ringSize)")
        }
        if !(0...0x7FFF).contains(logsTotal) { return field("logsTotal", "is \(logsTotal); expected 0 to 32767") }
        var ids = Set<Int>()
        var used = 0
        for (index, secret) in secrets.enumerated() {
            let name = "secrets[\(index)]"
            if !(0...0x7FFF).contains(secret.id) || !ids.insert(secret.id).inserted { return field(name, "has id \(secret.id), outside 0...32767 or repeated") }
            guard secret.header.count >= SeedKeeper.headerSize,
                  secret.header.count == SeedKeeper.headerSize + Int(secret.header[SeedKeeper.headerSize - 1]),
                  Int(secret.header[SeedKeeper.headerSize - 1]) <= SeedKeeper.maxLabelLength else {
                return field(name, "has a header of \(secret.header.count) bytes that its label size does not match")
            }
            if secret.secret.count > 2048 { return field(name, "has a secret of \(secret.secret.count) bytes; at most 2048") }
            if secret.size < secret.header.count || secret.size > memorySize { return field(name, "has size \(secret.size); outside its header and the memory") }
            used += secret.size + SoftSeedKeeper.objectOverhead
        }
        if used > memorySize { return field("secrets", "take \(used) bytes; the memory has \(memorySize)") }
        return nil
    }
}
