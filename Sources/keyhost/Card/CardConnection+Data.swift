import KeyhostCard
import KeyhostRecord
import KeyhostServices

/// GET DATA and STORE DATA for `keyhost card get-data` / `store-data`: public data, cash data, and the NDEF message
/// the card's NFC side serves (its file's 2-byte length and segments handled here, not by the user).
extension CardConnection {
    /// Takes the card as far as GET DATA needs: nowhere past SELECT on 3.x, which answers it in clear to anyone (no
    /// pairing, no PIN); the secure channel on 4.x, whose every command goes through it (still no PIN).
    public func openForGetData() throws {
        if !isV1 { try open(.secureChannel) }
    }

    /// GET DATA of `slot`: public or cash data as stored, or the NDEF message without the file's length. `{type, data}`.
    public func getData(_ slot: DataSlot) throws -> Record {
        try frontEnd.mapping("GET DATA") {
            let data = slot == .ndef ? try card.readNDEF() : try card.getData(slot: slot)
            return Record.object([("type", .string(slot.name)), ("data", .bytes(data))])
        }
    }

    /// The most bytes `storeData` takes for `slot`: 127 of public or cash data, an NDEF message of 510 (the file's
    /// 512 bytes hold its 2-byte length too).
    public static func dataLimit(_ slot: DataSlot) -> Int { slot == .ndef ? slot.capacity - 2 : slot.capacity }

    /// Refuses, before the card is opened, data that `slot` cannot hold.
    public static func checkDataSize(_ count: Int, for slot: DataSlot) throws {
        guard count > dataLimit(slot) else { return }
        throw CardServiceError(kind: "invalid_argument", "\(count) bytes do not fit: the card keeps at most \(dataLimit(slot)) bytes of "
                               + (slot == .ndef ? "NDEF message" : "\(slot.name) data"))
    }

    /// STORE DATA (PIN verified) of `data` into `slot`, replacing what was there (an NDEF message whole, in segments
    /// when it is longer than one command). `{type, length}`.
    public func storeData(_ data: [UInt8], slot: DataSlot) throws -> Record {
        try Self.checkDataSize(data.count, for: slot)
        return try frontEnd.mapping("STORE DATA") {
            if slot == .ndef { try card.writeNDEF(data) } else { try card.storeData(data, slot: slot) }
            return Record.object([("type", .string(slot.name)), ("length", .integer(data.count))])
        }
    }
}
