import KeyhostCrypto

/// GET DATA and STORE DATA: public data, cash data and the NDEF file (KeycardApplet.getData / storeData, the same on
/// 3.2 and 4.0). Reading needs no PIN (3.x not even a secure channel); storing needs the PIN.
extension KeycardCommandSet {
    /// The NDEF file in segments no longer than this: a multiple of 4 (STORE DATA's P2 counts 4-byte words) that fits
    /// either secure channel's largest command (v1: 223 bytes of data).
    static let ndefSegment = 220

    /// GET DATA of `slot` as the card answers it (for the NDEF file: its first segment, 2-byte length first).
    public func getData(slot: DataSlot = .publicData) throws -> [UInt8] {
        if version == .v1 && !isSecureChannelOpen { return try sendPlain(.getData, p1: slot.rawValue) }
        return try sendSecure(.getData, p1: slot.rawValue)
    }

    /// STORE DATA (PIN verified): up to 127 bytes of public or cash data, or the first bytes of the NDEF file.
    public func storeData(_ data: [UInt8], slot: DataSlot = .publicData) throws {
        try sendSecure(.storeData, p1: slot.rawValue, data: data)
    }

    /// The NDEF message the card's NDEF file holds (without the file's 2-byte length). 4.x answers the file in
    /// segments (P2 = offset / 4); 3.x answers only its first 223 bytes, so a longer message is refused, not cut.
    public func readNDEF() throws -> [UInt8] {
        var file = try getData(slot: .ndef)
        guard file.count >= 2 else { throw KeycardError.invalidResponse(.getData, "NDEF file of \(file.count) bytes; it starts with a 2-byte length") }
        let total = (Int(file[0]) << 8 | Int(file[1])) + 2
        guard total <= DataSlot.ndef.capacity else {
            throw KeycardError.invalidResponse(.getData, "NDEF file length \(total - 2) is more than the file's \(DataSlot.ndef.capacity - 2) bytes")
        }
        if version == .v2 {
            while file.count < total {
                guard file.count % 4 == 0, let word = UInt8(exactly: file.count / 4) else {
                    throw KeycardError.invalidResponse(.getData, "NDEF segment ends at byte \(file.count), not at a 4-byte word")
                }
                let next = try sendSecure(.getData, p1: DataSlot.ndef.rawValue, p2: word)
                guard !next.isEmpty else { throw KeycardError.invalidResponse(.getData, "empty NDEF segment at byte \(file.count)") }
                file += next
            }
        }
        guard file.count >= total else {
            throw KeycardError.unsupportedForm(.getData, what: "reading an NDEF message of \(total - 2) bytes: its GET DATA answers the first "
                + "\(file.count - 2) only (phones read the whole message over NFC)", applet: appletName)
        }
        guard file.count == total else {
            throw KeycardError.invalidResponse(.getData, "NDEF file of \(file.count) bytes where its length says \(total)")
        }
        return Array(file[2...])
    }

    /// STORE DATA of `message` as the NDEF file (PIN verified): its 2-byte length, then the message, at most 510 bytes.
    /// A file longer than one command goes in segments with the length written last, so a phone reading the tag midway
    /// finds an empty message rather than a torn one.
    public func writeNDEF(_ message: [UInt8]) throws {
        let capacity = DataSlot.ndef.capacity - 2
        guard message.count <= capacity else {
            throw KeycardError.invalidArgument("an NDEF message holds at most \(capacity) bytes on a Keycard, got \(message.count)")
        }
        let length: [UInt8] = [UInt8(truncatingIfNeeded: message.count >> 8), UInt8(truncatingIfNeeded: message.count)]
        let file = length + message
        guard file.count > Self.ndefSegment else {
            try storeData(file, slot: .ndef)
            return
        }
        var offset = 0
        while offset < file.count {
            let end = min(offset + Self.ndefSegment, file.count)
            let segment = offset == 0 ? [0, 0] + Array(file[2..<end]) : Array(file[offset..<end])
            try sendSecure(.storeData, p1: DataSlot.ndef.rawValue, p2: UInt8(offset / 4), data: segment)
            offset = end
        }
        try sendSecure(.storeData, p1: DataSlot.ndef.rawValue, p2: 0, data: length)
    }
}
