/// What a state file may hold. The file is input like any other (copied, edited, fuzzed): a value the
/// applet could never have written would otherwise reach a byte-sized field of an answer and trap
/// there, so every field is held to the applet's own limits when the file is read.
extension SoftKeycardState {
    /// The first field outside the applet's limits, as "field 'x': problem", or nil when all are within.
    public func problem() -> String? {
        func field(_ name: String, _ problem: String) -> String { "field '\(name)' \(problem)" }
        func bytes(_ name: String, _ value: [UInt8], _ allowed: [Int]) -> String? {
            allowed.contains(value.count) ? nil : field(name, "has \(value.count) bytes; expected \(allowed.map(String.init).joined(separator: " or "))")
        }
        func path(_ name: String, _ value: [UInt32]) -> String? {
            value.count <= KeyPath.maxDepth ? nil : field(name, "has \(value.count) components; a Keycard keeps at most \(KeyPath.maxDepth)")
        }
        guard appletVersion.major == 3 || appletVersion.major == 4 else {
            return field("appletVersion", "is \(appletVersion); the software card emulates applets 3.x and 4.x")
        }
        if let p = bytes("uid", uid, [16]) ?? bytes("secureChannelKey", secureChannelKey, [32]) ?? bytes("identityKey", identityKey, [32])
            ?? bytes("certificate", certificate, [IdentityCertificate.length]) ?? bytes("keyUID", keyUID, [0, 32])
            ?? path("keyPath", keyPath) ?? path("pinlessPath", pinlessPath) {
            return p
        }
        if let secret = pairingSecret, let p = bytes("pairingSecret", secret, [32]) { return p }
        if let key = masterKey, let p = bytes("masterKey", key, [32]) { return p }
        if let chain = masterChainCode, let p = bytes("masterChainCode", chain, [32]) { return p }
        if masterChainCode != nil && masterKey == nil { return field("masterChainCode", "is set without a masterKey") }
        // The slot count goes out in one byte of SELECT, and slot numbers must stay below the ephemeral slot's.
        guard pairingKeys.count < Int(Pairing.ephemeralIndex) else {
            return field("pairingKeys", "has \(pairingKeys.count) slots; a Keycard has at most \(Int(Pairing.ephemeralIndex) - 1)")
        }
        for (slot, key) in pairingKeys.enumerated() {
            if let key, let p = bytes("pairingKeys[\(slot)]", key, [32]) { return p }
        }
        let data: [(String, [UInt8], DataSlot)] = [("publicData", publicData, .publicData), ("cashData", cashData ?? [], .cash),
                                                   ("ndefFile", ndefFile ?? [], .ndef)]
        for (name, value, slot) in data where value.count > slot.capacity {
            return field(name, "has \(value.count) bytes; STORE DATA keeps at most \(slot.capacity)")
        }
        if let credentials { return credentials.problem() }
        return nil
    }
}

extension SoftKeycardState.Credentials {
    /// Limits as INIT accepts them (PIN 2–10 tries, PUK 3–12); counters between 0 and their limit.
    func problem() -> String? {
        func field(_ name: String, _ problem: String) -> String { "field 'credentials.\(name)' \(problem)" }
        func digits(_ name: String, _ value: String, _ count: Int) -> String? {
            let utf8 = Array(value.utf8)
            return utf8.count == count && utf8.allSatisfy({ (0x30...0x39).contains($0) }) ? nil : field(name, "is not \(count) digits")
        }
        func counter(_ name: String, _ value: Int, _ range: ClosedRange<Int>) -> String? {
            range.contains(value) ? nil : field(name, "is \(value); expected \(range.lowerBound) to \(range.upperBound)")
        }
        if let p = digits("pin", pin, Keycard.pinLength) ?? digits("puk", puk, Keycard.pukLength) { return p }
        if let alternatePIN, let p = digits("alternatePIN", alternatePIN, Keycard.pinLength) { return p }
        if let p = counter("pinLimit", pinLimit, 2...10) ?? counter("pukLimit", pukLimit, 3...12) { return p }
        return counter("pinTries", pinTries, 0...pinLimit) ?? counter("alternatePINTries", alternatePINTries, 0...pinLimit)
            ?? counter("pukTries", pukTries, 0...pukLimit)
    }
}
