import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

/// The Satochip commands both front ends run (`keyhost card satochip …`, Lua's `card.open_satochip{}` methods), each
/// returning the record both print, so their fields cannot drift apart. Secrets are the caller's, as `SecretBytes`.
extension SatochipConnection {
    /// SETUP with `pin` and `puk`: `{setup_done, pin_retries, puk_retries}`. A card set up already is refused.
    public func setup(pin: SecretBytes, puk: SecretBytes, pinTries: Int, pukTries: Int) throws -> Record {
        try requireNotSetUp()
        // 63 and not 255: the applet reports tries left in the 6 low bits of 63Cx.
        guard (1...63).contains(pinTries), (1...63).contains(pukTries) else {
            throw CardServiceError(kind: "invalid_argument", "PIN and PUK tries are 1 to 63, not \(pinTries) and \(pukTries)")
        }
        try Self.mapping("SETUP") { try card.setup(pin: pin, puk: puk, pinTries: UInt8(pinTries), pukTries: UInt8(pukTries)) }
        let status = try refreshStatus()
        return .object([("setup_done", .bool(status.isSetupDone)), ("pin_retries", .integer(status.pinTriesLeft)),
                        ("puk_retries", .integer(status.pukTriesLeft))])
    }

    /// Refuses a card set up already (`already_initialized`): check before asking for a new PIN and PUK.
    public func requireNotSetUp() throws {
        guard !status.isSetupDone else {
            throw CardServiceError(kind: "already_initialized", "the Satochip in \(readerName) is already set up; change its PIN instead")
        }
    }

    /// GET STATUS: `SatochipRecords.info` without label and certificate (they need the PIN).
    public func statusRecord() throws -> Record {
        SatochipRecords.info(try refreshStatus(), reader: readerName, label: nil, trust: nil)
    }

    /// VERIFY PIN: `{verified, pin_retries}`; a wrong PIN throws `wrong_pin` with the tries left.
    public func verifiedPIN(_ pin: SecretBytes) throws -> Record {
        try requireSetUp()
        try Self.mapping("VERIFY PIN") { try card.verifyPIN(pin) }
        return .object([("verified", .bool(true)), ("pin_retries", .integer(try refreshStatus().pinTriesLeft))])
    }

    /// CHANGE PIN from `old` to `new`: `{changed: "pin"}`.
    public func changePIN(old: SecretBytes, new: SecretBytes) throws -> Record {
        try requireSetUp()
        try Self.mapping("CHANGE PIN") { try card.changePIN(old: old, new: new) }
        return .object([("changed", .string("pin"))])
    }

    /// UNBLOCK PIN with `puk` (the PIN keeps its value): `{pin_retries, puk_retries}`.
    public func unblockPIN(puk: SecretBytes) throws -> Record {
        try requireSetUp()
        try Self.mapping("UNBLOCK PIN") { try card.unblockPIN(puk: puk) }
        let status = try refreshStatus()
        return .object([("pin_retries", .integer(status.pinTriesLeft)), ("puk_retries", .integer(status.pukTriesLeft))])
    }

    /// Refuses a card that holds a seed already (`already_seeded`): check before asking for the mnemonic.
    public func requireNoSeed() throws {
        try requireSetUp()
        guard !status.isSeeded else {
            throw CardServiceError(kind: "already_seeded", "the Satochip in \(readerName) already holds a seed; reset it first, if you hold its backup")
        }
    }

    /// BIP32 IMPORT SEED of `seed` (16 to 64 bytes; the PIN verified first): `{seeded, authentikey}`.
    public func importSeed(_ seed: SecretBytes) throws -> Record {
        try requireNoSeed()
        let authentikey = try Self.mapping("BIP32 IMPORT SEED") { try card.importSeed(seed) }
        return .object([("seeded", .bool(true)), ("authentikey", .bytes(authentikey.compressed))])
    }

    /// Refuses a card whose certificate does not chain to a trusted CA (`untrusted_card`), before a destructive
    /// command (`what`); the PIN must be verified. The verdict, for the confirmation to name the device key.
    public func requireTrusted(_ what: String) throws -> SatochipTrust {
        let trust = try certificate()
        guard trust.isTrusted else {
            throw CardServiceError(kind: "untrusted_card", "the Satochip in \(readerName) did not prove it is genuine "
                                   + "(\(trust.problem ?? "unknown reason")), so \(what) is refused; if you trust the certificate authority "
                                   + "that issued its certificate, \(frontEnd.trustCA)")
        }
        return trust
    }

    /// BIP32 RESET SEED (it takes the PIN itself, and logs it out): `{seeded}`.
    public func resetSeed(pin: SecretBytes) throws -> Record {
        try requireSeed()
        try Self.mapping("BIP32 RESET SEED") { try card.resetSeed(pin: pin) }
        return .object([("seeded", .bool(try refreshStatus().isSeeded))])
    }

    /// SET LABEL to `new` when given, then GET LABEL (the PIN verified): `{label}`.
    public func label(setting new: String?) throws -> Record {
        try requireSetUp()
        if let new { try Self.mapping("SET LABEL") { try card.setLabel(new) } }
        return .object([("label", .string(try Self.mapping("GET LABEL") { try card.label() }))])
    }

    /// The authenticity check (the PIN verified) as a record: `SatochipRecords.certificate`.
    public func certificateRecord() throws -> (record: Record, trust: SatochipTrust) {
        try requireSetUp()
        let trust = try certificate()
        return (SatochipRecords.certificate(trust, reader: readerName), trust)
    }

    /// `card info`'s record: the status, and with `pin` (verified first) the label and the certificate verdict.
    public func infoRecord(pin: SecretBytes?) throws -> (record: Record, trust: SatochipTrust?) {
        var label: String?
        var trust: SatochipTrust?
        if status.isSetupDone, let pin {
            try Self.mapping("VERIFY PIN") { try card.verifyPIN(pin) }
            label = try Self.mapping("GET LABEL") { try card.label() }
            trust = try certificate()
        }
        return (SatochipRecords.info(try refreshStatus(), reader: readerName, label: label, trust: trust), trust)
    }
}
