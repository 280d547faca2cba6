import KeyhostCrypto

extension KeycardCommandSet {
    /// GET STATUS P1 00: PIN and PUK tries left and whether a key is loaded.
    public func getStatus() throws -> ApplicationStatus {
        try ApplicationStatus(response: sendSecure(.getStatus, p1: 0x00))
    }

    /// GET STATUS P1 01 (v1): the current derivation path (empty for the master key).
    public func getCurrentPath() throws -> KeyPath {
        try requireV1(.getStatus)
        return try KeyPath(source: .master, components: KeyPath.decode(sendSecure(.getStatus, p1: 0x01)))
    }

    /// VERIFY PIN from text, for this module's tests (`@testable`): a String cannot be wiped, so the API takes bytes.
    func verifyPIN(_ pin: String) throws {
        var data = Array(pin.utf8)
        defer { wipe(&data) }
        try sendSecure(.verifyPIN, data: data)
    }

    /// VERIFY PIN from bytes that never become a String (which could not be wiped).
    public func verifyPIN(_ pin: SecretBytes) throws {
        var data = pin.revealedBytes()
        defer { wipe(&data) }
        try sendSecure(.verifyPIN, data: data)
    }

    /// CHANGE PIN P1 00 (PIN verified), from text: for this module's tests (`@testable`).
    func changePIN(_ newPIN: String) throws {
        try checkDigits(newPIN, Keycard.pinLength, "PIN")
        var data = Array(newPIN.utf8)
        defer { wipe(&data) }
        try sendSecure(.changePIN, p1: CredentialKind.pin.rawValue, data: data)
    }

    /// CHANGE PIN P1 01 (PIN verified), from text: for this module's tests (`@testable`).
    func changePUK(_ newPUK: String) throws {
        try checkDigits(newPUK, Keycard.pukLength, "PUK")
        var data = Array(newPUK.utf8)
        defer { wipe(&data) }
        try sendSecure(.changePIN, p1: CredentialKind.puk.rawValue, data: data)
    }

    /// CHANGE PIN P1 02 (v1, PIN verified): a new pairing secret; existing pairings stay valid.
    public func changePairingSecret(_ secret: SecretBytes) throws {
        try requireV1(.changePIN)
        guard secret.count == 32 else { throw KeycardError.invalidArgument("a pairing secret has 32 bytes") }
        var data = secret.revealedBytes()
        defer { wipe(&data) }
        try sendSecure(.changePIN, p1: CredentialKind.pairingSecret.rawValue, data: data)
    }

    /// UNBLOCK PIN from text, for this module's tests (`@testable`).
    func unblockPIN(puk: String, newPIN: String) throws {
        try checkDigits(newPIN, Keycard.pinLength, "PIN")
        var data = Array(puk.utf8) + Array(newPIN.utf8)
        defer { wipe(&data) }
        try sendSecure(.unblockPIN, data: data)
    }

    /// CHANGE PIN P1 00 (PIN verified) to `newPIN`, six digits; the bytes never become a String.
    public func changePIN(_ newPIN: SecretBytes) throws {
        try changeCredential(.pin, newPIN, Keycard.pinLength, "PIN")
    }

    /// CHANGE PIN P1 01 (PIN verified) to `newPUK`, twelve digits.
    public func changePUK(_ newPUK: SecretBytes) throws {
        try changeCredential(.puk, newPUK, Keycard.pukLength, "PUK")
    }

    /// UNBLOCK PIN: PUK then the new PIN (only while the PIN is blocked). Throws `.wrongPUK` or `.pukBlocked`.
    public func unblockPIN(puk: SecretBytes, newPIN: SecretBytes) throws {
        var pin = newPIN.revealedBytes()
        var data = puk.revealedBytes() + pin
        defer { wipe(&pin); wipe(&data) }
        try checkDigits(bytes: pin, Keycard.pinLength, "PIN")
        try sendSecure(.unblockPIN, data: data)
    }

    private func changeCredential(_ kind: CredentialKind, _ value: SecretBytes, _ length: Int, _ what: String) throws {
        var data = value.revealedBytes()
        defer { wipe(&data) }
        try checkDigits(bytes: data, length, what)
        try sendSecure(.changePIN, p1: kind.rawValue, data: data)
    }

    func checkDigits(bytes value: [UInt8], _ count: Int, _ what: String) throws {
        guard value.count == count, value.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw KeycardError.invalidArgument("the \(what) must be \(count) digits")
        }
    }
}
