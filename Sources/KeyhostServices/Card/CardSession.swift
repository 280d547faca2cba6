import KeyhostCard
import KeyhostCrypto
import KeyhostFiles

#if canImport(Glibc)
import Glibc
#endif

/// One open connection to a card (virtual, PC/SC or a replayed transcript) with the Keycard session logic both
/// front ends share: SELECT, pairing (stored per card, reused, an ephemeral fallback), the secure channel, the PIN,
/// INIT, FACTORY RESET, UNPAIR of other slots, the recorded transcript. `CardOpener` opens it; Lua's
/// `keyhost.card.session` holds one, and `CardConnection` takes one as far as a command needs. The session stays usable after any error; `close` drops the secure
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
    /// Who the session talks to: where `auto` and `openChannel` take secrets the caller did not pass, whether a full
    /// card may be paired through its temporary slot, who is told of a new pairing, and how errors are worded.
    public var frontEnd: CardFrontEnd
    /// The channel stack under the command set.
    public let transport: CardTransport
    private var recordingWritten = false

    /// A session over `card`, which sends through `transport` (`CardOpener.open` builds both).
    public init(transport: CardTransport, card: KeycardCommandSet, store: PairingStore, frontEnd: CardFrontEnd) {
        self.transport = transport
        readerName = transport.readerName
        self.card = card
        virtualCard = transport.virtualCard
        recorder = transport.recorder
        recordPath = transport.recordPath
        tracer = transport.tracer
        self.store = store
        self.frontEnd = frontEnd
        if let tracer, tracer.showsPlaintext {
            card.secureExchangeObserver = { [weak tracer] command, response in tracer?.plaintext(command: command, response: response) }
        }
    }

    /// APDUs sent so far (SELECT, secure channel, VERIFY PIN included).
    public var apduCount: Int { transport.counter.count }

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

    /// Writes the transcript once, at close.
    func writeRecording() throws {
        guard !recordingWritten else { return }
        recordingWritten = true
        try transport.writeRecording()
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
