/// A state file is input like any other: every field is held to what a card could have written.
extension SoftCKTapState {
    /// The first field outside the card's limits, as "field 'x': problem", or nil when all are within.
    public func problem() -> String? {
        func field(_ name: String, _ problem: String) -> String { "field '\(name)' \(problem)" }
        func bytes(_ name: String, _ value: [UInt8], _ count: Int) -> String? {
            value.count == count ? nil : field(name, "has \(value.count) bytes; expected \(count)")
        }
        if let p = bytes("cardKey", cardKey, 32) { return p }
        guard (1...16).contains(version.utf8.count) else { return field("version", "must have 1 to 16 characters") }
        guard (0...Int(Int32.max)).contains(birth) else { return field("birth", "is out of range") }
        guard (1...8).contains(certificateChain.count) else { return field("certificateChain", "must hold 1 to 8 certificates") }
        for (i, c) in certificateChain.enumerated() where c.count != 65 { return field("certificateChain[\(i)]", "has \(c.count) bytes; expected 65") }
        guard (6...32).contains(cvc.count) else { return field("cvc", "has \(cvc.count) bytes; expected 6 to 32") }
        guard (0...127).contains(numBackups) else { return field("numBackups", "is \(numBackups); expected 0 to 127") }
        guard (0...1000).contains(authFailures) else { return field("authFailures", "is out of range") }
        guard (0...3600).contains(authDelay) else { return field("authDelay", "is \(authDelay); expected 0 to 3600") }
        switch kind {
        case .tapsigner:
            guard let key = backupKey else { return field("backupKey", "is missing; a TAPSIGNER has one") }
            if let p = bytes("backupKey", key, 16) { return p }
            guard slots.count == 1 else { return field("slots", "has \(slots.count) slots; a TAPSIGNER has 1") }
        case .satscard:
            guard (1...255).contains(slots.count) else { return field("slots", "has \(slots.count) slots; expected 1 to 255") }
        }
        guard (0..<slots.count).contains(activeSlot) else { return field("activeSlot", "is \(activeSlot); expected 0 to \(slots.count - 1)") }
        for (i, slot) in slots.enumerated() {
            let name = "slots[\(i)]"
            if let key = slot.masterKey, let p = bytes(name + ".masterKey", key, 32) { return p }
            if let cc = slot.chainCode, let p = bytes(name + ".chainCode", cc, 32) { return p }
            if slot.isUsed != (slot.chainCode != nil) { return field(name, "must have both a master key and a chain code, or neither") }
            guard slot.path.count <= 8 else { return field(name + ".path", "has \(slot.path.count) components; at most 8") }
            if !slot.isUsed && !slot.sealed { return field(name, "is unsealed but was never used") }
            if kind == .tapsigner && !slot.sealed { return field(name, "is unsealed; a TAPSIGNER never unseals") }
        }
        return nil
    }
}
