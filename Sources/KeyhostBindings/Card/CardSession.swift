import KeyhostCard
import KeyhostCrypto
import LuaRuntime
#if canImport(Glibc)
import Glibc
#endif

/// `keyhost.card.session`: one open connection to a card (virtual, PC/SC or a replayed transcript) with the
/// Keycard command set on top. Methods raise structured errors (`CardLuaError`); the session stays usable
/// after any of them. Closing it drops the secure channel keys and writes the recorded transcript, if any.
final class CardSessionObject: LuaObject {
    let readerName: String
    private var card: KeycardCommandSet?
    let virtualCard: SoftKeycard?
    let recorder: RecordingChannel?
    let recordPath: String?
    let tracer: TracingChannel?
    let store: PairingStore
    private(set) var pinVerified = false
    /// Where `auto` and `openChannel` take secrets the caller did not pass (the command line words its hints differently).
    var pinInput = SecretInput.pin
    var passwordInput = SecretInput.pairingPassword
    /// With every pairing slot taken, pair through the 3.2 applet's temporary slot (gone at power-off) instead of
    /// failing. Lua's `s:auto` does (and says so in its result); commands only for `unpair --others`, which frees slots.
    var ephemeralFallback = true
    /// Told when `openChannel` takes a pairing slot or falls back to the temporary one (commands print it on stderr).
    var pairingNotice: ((String) -> Void)?
    private var recordingWritten = false

    init(readerName: String, card: KeycardCommandSet, virtualCard: SoftKeycard?, recorder: RecordingChannel?, recordPath: String?,
         tracer: TracingChannel?, store: PairingStore) {
        self.readerName = readerName
        self.card = card
        self.virtualCard = virtualCard
        self.recorder = recorder
        self.recordPath = recordPath
        self.tracer = tracer
        self.store = store
        if let tracer, tracer.showsPlaintext {
            card.secureExchangeObserver = { [weak tracer] command, response in tracer?.plaintext(command: command, response: response) }
        }
    }

    deinit { try? writeRecording() }

    static let luaTypeName = "keyhost.card.session"

    func live() throws -> KeycardCommandSet {
        guard let card else { throw BindingError("\(Self.luaTypeName) is closed") }
        return card
    }

    /// The application info, selecting the applet first when no SELECT was made yet.
    func info(_ card: KeycardCommandSet) throws -> ApplicationInfo {
        if let info = card.applicationInfo { return info }
        return try select(card)
    }

    @discardableResult
    func select(_ card: KeycardCommandSet) throws -> ApplicationInfo {
        pinVerified = false
        return try card.select()
    }

    var luaDescription: String {
        guard let card else { return "\(Self.luaTypeName) (closed)" }
        var parts = ["reader \(readerName)"]
        if let info = card.applicationInfo {
            parts.append(info.isInitialized ? "applet \(info.version)" : "not initialised")
            if let uid = info.instanceUID { parts.append("uid \(Hex.encode(uid.prefix(4)))…") }
            if let keyUID = info.keyUID { parts.append("key \(Hex.encode(keyUID.prefix(4)))…") }
        } else {
            parts.append("not selected")
        }
        if card.isSecureChannelOpen { parts.append(pinVerified ? "secure channel open, PIN verified" : "secure channel open") }
        if let pairing = card.pairing { parts.append("pairing slot \(pairing.index)") }
        return "\(Self.luaTypeName)(\(parts.joined(separator: ", ")))"
    }

    func luaClose() {
        card?.closeSecureChannel()
        card?.pairing = nil
        card?.secureExchangeObserver = nil
        card = nil
        pinVerified = false
        try? writeRecording()
    }

    /// Writes the transcript (mode 0600: PAIR cryptograms are in it) once, at close.
    func writeRecording() throws {
        guard let recorder, let recordPath, !recordingWritten else { return }
        recordingWritten = true
        let fd = open(recordPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CardLuaError(kind: "record", "cannot write transcript \(recordPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        let text = Array(recorder.transcript.text.utf8)
        var written = 0
        while written < text.count {
            let n = text[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw CardLuaError(kind: "record", "cannot write transcript \(recordPath)") }
            written += n
        }
    }

    // MARK: - Secure channel and pairing

    /// Opens the secure channel; on v1 with `card.pairing`, else the stored pairing for this card.
    func openSecureChannel(_ card: KeycardCommandSet) throws {
        let info = try info(card)
        pinVerified = false
        if info.secureChannelVersion == .v1 && card.pairing == nil, let uid = info.instanceUID, let stored = try store.lookup(uid: uid) {
            card.pairing = stored
        }
        try card.openSecureChannel()
    }

    /// PAIR, then records the pairing in the store at once, before anything else can fail. An ephemeral
    /// pairing (the 3.2 applet's slot 0xFF, gone at power-off) is never stored.
    func pair(_ card: KeycardCommandSet, password: SecretBytes, mode: PairingMode, persist: Bool) throws -> Pairing {
        let info = try info(card)
        if card.isSecureChannelOpen { try select(card) }
        let secret = try PairingSecret.derive(password: password)
        let pairing = try card.pair(secret: secret, mode: mode)
        if persist, pairing.index != Pairing.ephemeralIndex, let uid = info.instanceUID {
            try store.save(uid: uid, pairing: pairing, applet: "\(info.version)")
        }
        return pairing
    }

    /// SELECT, pair or reuse the stored pairing, open the secure channel, verify the PIN.
    func auto(_ card: KeycardCommandSet, pin: [UInt8]?, password: [UInt8]?) throws -> LuaTable {
        let result = try openChannel(card, password: password)
        let secretPIN = try pinInput.resolve(pin)
        try verifyPIN(card, secretPIN)
        return result
    }

    /// SELECT, pair or reuse the stored pairing (3.x), open the secure channel: `s:auto` without the PIN.
    func openChannel(_ card: KeycardCommandSet, password: [UInt8]?) throws -> LuaTable {
        let info = try select(card)
        guard info.isInitialized else { throw KeycardError.notInitialized }
        var result = LuaTable(["applet": .text("\(info.version)"), "secure_channel": .integer(Int64(info.secureChannelVersion.rawValue))])
        if info.secureChannelVersion == .v1 {
            guard let uid = info.instanceUID else { throw KeycardError.invalidResponse(.select, "no instance UID to key the pairing by") }
            var reused = false
            if let stored = try store.lookup(uid: uid) {
                card.pairing = stored
                do {
                    try card.openSecureChannel()
                    reused = true
                } catch let error as KeycardError where CardSessionObject.rejectsPairing(error) {
                    // The card no longer knows this pairing (unpaired elsewhere, reset): forget it and pair once more.
                    try store.remove(uid: uid)
                    card.pairing = nil
                    try select(card)
                }
            }
            if !reused {
                let secret = try passwordInput.resolve(password)
                do {
                    let pairing = try pair(card, password: secret, mode: .persistent, persist: true)
                    pairingNotice?(Self.slotTaken(pairing.index, freeBefore: info.freePairingSlots))
                } catch KeycardError.noFreePairingSlot where ephemeralFallback {
                    // Every slot is taken: an ephemeral pairing still opens a channel, e.g. to unpair_others().
                    try select(card)
                    _ = try pair(card, password: secret, mode: .ephemeral, persist: false)
                    result["ephemeral"] = .boolean(true)
                    pairingNotice?("every pairing slot of the card is taken; paired through its temporary slot, for this session only")
                }
                result["new_pairing"] = .boolean(true)
                try card.openSecureChannel()
            } else {
                result["new_pairing"] = .boolean(false)
            }
            result["pairing_index"] = card.pairing.map { .integer(Int64($0.index)) } ?? .nil
            result["instance_uid"] = .string(uid)
        } else {
            try card.openSecureChannel()
        }
        return result
    }

    /// What a new persistent pairing cost: slots are few (10 on a 3.2 card) and each host keeps its own until freed.
    static func slotTaken(_ index: UInt8, freeBefore: Int?) -> String {
        let left = freeBefore.map { max(0, $0 - 1) }
        let count = left.map { $0 == 1 ? "1 pairing slot is" : "\($0) pairing slots are" } ?? "an unknown number of pairing slots are"
        return "paired with the card: this host now holds its pairing slot \(index); \(count) left free "
            + "(keyhost card unpair gives this one back, keyhost card unpair --others frees the rest)"
    }

    /// INIT a blank card (`s:init{}`, `keyhost card init`): a 3.x card takes the pairing secret derived from
    /// `pairingPassword`; without `duress` the command set sends six random digits nobody knows, so the PIN
    /// never opens the duress wallet (see DuressPIN). Selects again afterwards: the card has new keys.
    func initialize(_ card: KeycardCommandSet, pin: SecretBytes, puk: SecretBytes, pairingPassword: SecretBytes?,
                    duress: SecretBytes?, pinRetries: Int?, pukRetries: Int?) throws {
        let info = try info(card)
        var secret: SecretBytes?
        if info.secureChannelVersion == .v1 {
            guard let pairingPassword else {
                throw KeycardError.invalidArgument("applet 3.x cards need a pairing password at INIT (they pair with it)")
            }
            secret = try PairingSecret.derive(password: pairingPassword)
        }
        try card.initialize(pin: pin.text, puk: puk.text, pairingSecret: secret, pinRetries: pinRetries, pukRetries: pukRetries,
                            alternatePIN: duress.map { $0.text })
        try select(card)
    }

    /// FACTORY RESET, then forget this host's pairing with the card and select it again (blank now).
    func factoryReset(_ card: KeycardCommandSet) throws {
        let uid = card.applicationInfo?.instanceUID
        try card.factoryReset()
        if let uid { try store.remove(uid: uid) }
        try select(card)
    }

    /// Whether OPEN SECURE CHANNEL / MUTUALLY AUTHENTICATE failed because the card does not know the pairing.
    static func rejectsPairing(_ error: KeycardError) -> Bool {
        switch error {
        case .incorrectParameters(.openSecureChannel, _), .secureChannelReset, .invalidResponse(.mutuallyAuthenticate, _),
             .invalidResponse(.openSecureChannel, _), .wrongData(.openSecureChannel):
            return true
        default:
            return false
        }
    }

    func verifyPIN(_ card: KeycardCommandSet, _ pin: SecretBytes) throws {
        pinVerified = false
        CrashFailpoint.trap("verify_pin", holding: pin)
        try card.verifyPIN(pin)
        pinVerified = true
    }

    /// Frees every pairing slot but this session's (v1; needs the PIN verified). UNPAIR of a free slot is harmless,
    /// so indexes are tried upwards until the card refuses the index as out of range.
    func unpairOthers(_ card: KeycardCommandSet) throws -> [Int] {
        guard let own = card.pairing else { throw KeycardError.notPaired }
        var freed: [Int] = []
        for index in 0..<255 where index != Int(own.index) {
            do {
                try card.unpair(index: UInt8(index))
                freed.append(index)
            } catch KeycardError.incorrectParameters(.unpair, _) {
                break
            }
        }
        return freed
    }

    /// After a command that may have reset the card's secure channel, keeps `pinVerified` honest.
    func noteChannel(_ card: KeycardCommandSet) {
        if !card.isSecureChannelOpen { pinVerified = false }
    }

    func setPINVerified(_ value: Bool) { pinVerified = value }
}
