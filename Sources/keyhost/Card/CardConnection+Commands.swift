import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// The everyday card commands of `keyhost card …`, over the session logic Lua's sessions use too (`s:auto`, `s:init`,
/// `s:pair`, the pairing store). Secrets are resolved here (`CardSecret`), never taken from the caller as text;
/// results are `Record` objects under the Lua result tables' names; errors are `CardServiceError`s worded for the command line.
extension CardConnection {
    /// Takes the card further: opens the secure channel (3.x: stored pairing, else PAIR with the pairing password)
    /// and, for `.pinVerified`, verifies the PIN. Commands that refuse some applets check them first, before asking secrets.
    public func open(_ access: CardAccess) throws {
        try frontEnd.mapping(nil) {
            switch access {
            case .selected: try session.select(card)
            case .secureChannel: _ = try session.openChannel(card, password: nil)
            case .pinVerified: _ = try session.auto(card, pin: nil, password: nil)
            }
        }
    }

    var isV1: Bool { selectInfo.secureChannelVersion == .v1 }

    /// What tells this card from others, in hex as `keyhost card info` prints it: the instance UID (3.x), else the
    /// identity public key of the card's certificate (4.x cards answer SELECT without an instance UID). nil for a blank 3.x card.
    public var cardIdentifier: String? {
        if let uid = selectInfo.instanceUID { return Hex.encode(uid) }
        return selectInfo.identityCertificate.map { Hex.encode($0.identityKey.compressed) }
    }

    /// Refuses a 3.x-only command (`pair`, `unpair`, `change-pairing-password`) on a 4.x card, before any secret is asked.
    public func requireV1(_ command: String) throws {
        guard isV1 else {
            throw CardServiceError(kind: "unsupported", "applet \(selectInfo.version) does not pair (its secure channel v2 needs no pairing): "
                               + "keyhost card \(command) is for applet 3.x cards")
        }
    }

    // MARK: - State

    /// GET STATUS, with what SELECT told (`CardRecords.status`, as Lua's `s:status()`).
    public func status() throws -> Record {
        try frontEnd.mapping("GET STATUS") { try CardRecords.status(card) }
    }

    // MARK: - Set-up and pairing

    /// INIT a blank card with PIN, PUK (and on 3.x the pairing password) from `KEYHOST_PIN`, `KEYHOST_PUK`,
    /// `KEYHOST_PAIRING_PASSWORD` or prompts, or with `generateSecrets` new ones (`GeneratedCardSecrets`), returned
    /// as `pin`, `puk`, `pairing_password`; the duress PIN from `KEYHOST_DURESS_PIN` when `duressPIN`, else six random
    /// digits nobody knows (never the PIN: the card would open its duress wallet). A 3.x card is then paired and the
    /// pairing stored. `{applet, instance_uid, identity_public_key, secure_channel, pairing_index}`. When INIT went
    /// through with generated secrets and the pairing failed, throws `CardInitIncomplete` holding them.
    public func initialize(pinRetries: Int?, pukRetries: Int?, duressPIN: Bool, generateSecrets: Bool = false) throws -> Record {
        let (password, generated) = try frontEnd.mapping("INIT") { () -> (SecretBytes?, GeneratedCardSecrets?) in
            if selectInfo.isInitialized { throw KeycardError.alreadyInitialized }
            if generateSecrets { try GeneratedCardSecrets.checkEnvironment(pairingPassword: isV1) }
            let pin, puk: SecretBytes, duress: SecretBytes?, generated: GeneratedCardSecrets?
            if generateSecrets {
                // The duress PIN first: the PIN made must differ from it.
                duress = duressPIN ? try CardSecret.duressPIN.resolve(setting: true) : nil
                var chosen = duress?.revealedBytes()
                let made = GeneratedCardSecrets(pairingPassword: isV1, duressPIN: chosen)
                if chosen != nil { zero(&chosen!) }
                (pin, puk, generated) = (made.pin, made.puk, made)
            } else {
                pin = try frontEnd.pin.setting.resolve(nil)
                puk = try CardSecret.puk.resolve(setting: true)
                duress = duressPIN ? try CardSecret.duressPIN.resolve(setting: true) : nil
                generated = nil
            }
            var pinBytes = pin.revealedBytes(), pukBytes = puk.revealedBytes(), duressBytes = duress?.revealedBytes()
            defer { zero(&pinBytes); zero(&pukBytes); if duressBytes != nil { zero(&duressBytes!) } }
            try DuressPIN.checkForCommandLine(pin: pinBytes, puk: pukBytes, duress: duressBytes)
            let password = isV1 ? try generated?.pairingPassword ?? frontEnd.pairingPassword.setting.resolve(nil) : nil
            try session.initialize(card, pin: pin, puk: puk, pairingPassword: password, duress: duress,
                                   pinRetries: pinRetries, pukRetries: pukRetries, reselect: false)
            return (password, generated)
        }
        var pairingIndex: Int?
        func result() -> Record {
            guard case .object(let fields) = CardRecords.initialized(card.applicationInfo ?? selectInfo, pairingIndex: pairingIndex) else {
                return .null
            }
            return .object(fields + (generated?.fields ?? []))
        }
        do {
            try frontEnd.mapping("INIT") {
                try session.select(card)
                if let password {
                    let free = card.applicationInfo?.freePairingSlots
                    let pairing = try session.pair(card, password: password, mode: .persistent, persist: true)
                    frontEnd.notice?(frontEnd.slotTaken(pairing.index, freeBefore: free))
                    pairingIndex = Int(pairing.index)
                }
            }
        } catch {
            guard generated != nil else { throw error }
            throw CardInitIncomplete(result: result(), error: error)
        }
        return result()
    }

    /// PAIR (3.x) with the pairing password, storing the pairing. A stored pairing the card still accepts is kept
    /// (no second slot is taken). `{instance_uid, pairing_index, new_pairing}`.
    public func pair() throws -> Record {
        try requireV1("pair")
        return try frontEnd.mapping("PAIR") {
            guard let uid = selectInfo.instanceUID else { throw KeycardError.invalidResponse(.select, "no instance UID to key the pairing by") }
            if let stored = try session.store.lookup(uid: uid) {
                card.pairing = stored
                do {
                    try card.openSecureChannel()
                    return CardRecords.paired(instanceUID: uid, index: Int(stored.index), new: false)
                } catch let error as KeycardError where CardSession.rejectsPairing(error) {
                    try session.store.remove(uid: uid)
                    card.pairing = nil
                    try session.select(card)
                }
            }
            let password = try frontEnd.pairingPassword.resolve(nil)
            let pairing = try session.pair(card, password: password, mode: .persistent, persist: true)
            frontEnd.notice?(frontEnd.slotTaken(pairing.index, freeBefore: card.applicationInfo?.freePairingSlots))
            return CardRecords.paired(instanceUID: uid, index: Int(pairing.index), new: true)
        }
    }

    /// UNPAIR (3.x, PIN verified): `index`, or with `others` every slot but this host's, or else this host's own
    /// pairing. The stored pairing is forgotten when its slot is freed. `{unpaired, forgot_stored_pairing}`.
    /// With `others`, `occupied` are the slots in use before the channel was opened (`occupiedPairingSlots`): only those are
    /// freed and reported, by the rule Lua's `s:unpair_others` follows too (`CardSession.unpairOthers`).
    public func unpair(index: Int?, others: Bool, occupied: [Int] = []) throws -> Record {
        try requireV1("unpair")
        return try frontEnd.mapping("UNPAIR") {
            guard let own = card.pairing else { throw KeycardError.notPaired }
            var freed: [Int]
            if others {
                freed = try session.unpairOthers(card, occupied: occupied, pin: nil)
            } else {
                let slot = index ?? Int(own.index)
                guard let byte = UInt8(exactly: slot) else { throw KeycardError.invalidArgument("pairing index \(slot) is not 0...255") }
                try card.unpair(index: byte)
                freed = [slot]
            }
            var forgot = false
            if let uid = selectInfo.instanceUID, let stored = try session.store.lookup(uid: uid), freed.contains(Int(stored.index)) {
                try session.store.remove(uid: uid)
                forgot = true
            }
            return Record.object([("unpaired", Record.integers(freed)), ("forgot_stored_pairing", .bool(forgot))])
        }
    }

    /// FACTORY RESET: keys, PIN, PUK and pairings are erased; this host's stored pairing is forgotten.
    /// The caller confirms first. `{instance_uid, identity_public_key, initialized}` (the card's identity before the reset).
    public func factoryReset() throws -> Record {
        try frontEnd.mapping("FACTORY RESET") {
            let uid = selectInfo.instanceUID
            let identity = selectInfo.identityCertificate?.identityKey.compressed
            try session.factoryReset(card)
            let info = try session.info(card)
            return Record.object([("instance_uid", .bytes(uid)), ("identity_public_key", .bytes(identity)),
                                  ("initialized", .bool(info.isInitialized))])
        }
    }

    // MARK: - Credentials

    /// The PIN tries left after a command (GET STATUS), for results.
    func pinRetries() throws -> Int { try card.getStatus().pinRetries }

    /// `{pin_retries}` after the PIN was verified (by `open(.pinVerified)`).
    public func verifiedPIN() throws -> Record {
        try frontEnd.mapping("GET STATUS") { Record.object([("verified", .bool(true)), ("pin_retries", .integer(try pinRetries()))]) }
    }

    /// CHANGE PIN (PIN verified) to `KEYHOST_NEW_PIN` or a prompt.
    public func changePIN() throws -> Record {
        try frontEnd.mapping("CHANGE PIN") {
            try card.changePIN(try CardSecret.newPIN.resolve())
            return Record.object([("changed", .string("pin"))])
        }
    }

    /// CHANGE PIN P1 01 (PIN verified) to `KEYHOST_NEW_PUK` or a prompt.
    public func changePUK() throws -> Record {
        try frontEnd.mapping("CHANGE PIN") {
            try card.changePUK(try CardSecret.newPUK.resolve())
            return Record.object([("changed", .string("puk"))])
        }
    }

    /// CHANGE PIN P1 02 (3.x, PIN verified) to `KEYHOST_NEW_PAIRING_PASSWORD` or a prompt; existing pairings stay valid.
    public func changePairingPassword() throws -> Record {
        try frontEnd.mapping("CHANGE PIN") {
            let password = try CardSecret.newPairingPassword.resolve()
            try card.changePairingSecret(try PairingSecret.derive(password: password))
            return Record.object([("changed", .string("pairing_password"))])
        }
    }

    /// UNBLOCK PIN (secure channel open) with `KEYHOST_PUK` and a new PIN from `KEYHOST_NEW_PIN`. `{pin_retries, puk_retries}`.
    public func unblockPIN() throws -> Record {
        try frontEnd.mapping("UNBLOCK PIN") {
            let puk = try CardSecret.puk.resolve()
            let newPIN = try CardSecret.newPIN.resolve()
            try card.unblockPIN(puk: puk, newPIN: newPIN)
            session.setPINVerified(true)
            let status = try card.getStatus()
            return Record.object([("pin_retries", .integer(status.pinRetries)), ("puk_retries", .integer(status.pukRetries))])
        }
    }
}

extension DuressPIN {
    /// For `keyhost card init`: `DuressPIN.problem`'s refusals naming the environment variables.
    static func checkForCommandLine(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) throws {
        switch problem(pin: pin, puk: puk, duress: duress) {
        case .duressEqualsPIN:
            throw CardServiceError(kind: "invalid_argument", "the duress PIN (KEYHOST_DURESS_PIN) equals the PIN: the card would open the duress wallet with your PIN; choose another duress PIN or leave it out")
        case .pukStartsWithPIN:
            throw CardServiceError(kind: "invalid_argument", "the PUK starts with the PIN: a 3.2 card's default duress PIN is the PUK's first six digits, so your PIN could open the duress wallet; choose a PUK that does not start with the PIN")
        case nil:
            return
        }
    }
}
