import KeyhostCard
import KeyhostCrypto
import KeyhostFiles

#if canImport(Glibc)
import Glibc
#endif

/// One open connection to a card (virtual, PC/SC or a replayed transcript) with the Keycard session logic both
/// front ends share: SELECT, pairing (stored per card, reused, an ephemeral fallback), the secure channel, the PIN,
/// INIT, FACTORY RESET, UNPAIR of other slots, the recorded transcript. Lua's `keyhost.card.session` holds one;
/// `CardConnection` opens one for commands. The session stays usable after any error; `close` drops the secure
/// channel keys and writes the recorded transcript, if any. Secrets are resolved per call and never kept.
public final class CardSession {
    /// The reader's name (`virtual`, a PC/SC reader, `replay FILE`).
    public let readerName: String
    /// The command set, nil once closed.
    public private(set) var card: KeycardCommandSet?
    /// The software card behind the virtual reader (its fault injection), nil for real readers.
    public let virtualCard: SoftKeycard?
    let recorder: RecordingChannel?
    let recordPath: String?
    /// The trace channel, when tracing (raw commands sent past the command set are traced through it).
    public let tracer: TracingChannel?
    /// Where this host's pairings are kept.
    public let store: PairingStore
    /// Whether the PIN was verified over the secure channel now open.
    public private(set) var pinVerified = false
    /// Where `auto` and `openChannel` take secrets the caller did not pass (the command line words its hints differently).
    public var pinInput = SecretInput.pin
    /// Where a new pairing takes the pairing password the caller did not pass.
    public var passwordInput = SecretInput.pairingPassword
    /// With every pairing slot taken, pair through the 3.2 applet's temporary slot (gone at power-off) instead of
    /// failing. Lua's `s:auto` does (and says so in its result); commands only for `unpair --others`, which frees slots.
    public var ephemeralFallback = true
    /// Told when `openChannel` takes a pairing slot or falls back to the temporary one (commands print it on stderr).
    public var pairingNotice: ((String) -> Void)?
    private var recordingWritten = false

    /// A session over `card`; `recorder` and `recordPath` write the transcript at close, `tracer` shows plaintext when asked.
    public init(readerName: String, card: KeycardCommandSet, virtualCard: SoftKeycard?, recorder: RecordingChannel?, recordPath: String?,
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

    /// The application info, selecting the applet first when no SELECT was made yet.
    public func info(_ card: KeycardCommandSet) throws -> ApplicationInfo {
        if let info = card.applicationInfo { return info }
        return try select(card)
    }

    /// SELECT (drops the secure channel, and with it the verified PIN).
    @discardableResult
    public func select(_ card: KeycardCommandSet) throws -> ApplicationInfo {
        pinVerified = false
        return try card.select()
    }

    /// Drops the secure channel and the pairing, and writes the transcript; the session is closed for good.
    public func close() {
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
        do {
            try AtomicFile.write(Array(recorder.transcript.text.utf8), to: recordPath, mode: 0o600)
        } catch let error as AtomicFile.WriteError {
            throw CardServiceError(kind: "record", "cannot write transcript \(recordPath): \(error.problem)")
        }
    }

    /// VERIFY PIN; `pinVerified` says whether it held.
    public func verifyPIN(_ card: KeycardCommandSet, _ pin: SecretBytes) throws {
        pinVerified = false
        CrashFailpoint.trap("verify_pin", holding: pin)
        try card.verifyPIN(pin)
        pinVerified = true
    }

    /// After a command that may have reset the card's secure channel, keeps `pinVerified` honest.
    public func noteChannel(_ card: KeycardCommandSet) {
        if !card.isSecureChannelOpen { pinVerified = false }
    }

    /// Records that a command other than VERIFY PIN left the PIN verified (UNBLOCK PIN).
    public func setPINVerified(_ value: Bool) { pinVerified = value }
}
