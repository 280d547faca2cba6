import KeyhostCard
import KeyhostCrypto
import KeyhostFiles

/// The connection under a card session: the channel stack (transport, recording, tracing) and what was opened.
/// Nothing in it knows the card family; `CardOpener` builds it once for every family.
public struct CardTransport {
    /// The reader's name (`virtual`, a PC/SC reader, `replay FILE`).
    public let readerName: String
    /// The top of the stack: what the family's command set sends through.
    public let channel: CardChannel
    /// The software Keycard behind the virtual reader (its fault injection), nil otherwise.
    public let virtualCard: SoftKeycard?
    /// The family of the software card behind the virtual reader; nil for a real reader or a replay.
    public let virtualFamily: CardFamily?
    /// The recording channel and where its transcript goes at close.
    public let recorder: RecordingChannel?
    public let recordPath: String?
    /// The trace channel, when tracing.
    public let tracer: TracingChannel?
    /// Counts the APDUs sent (SELECT, secure channel and PIN included).
    public let counter: CountingChannel
    /// A card that exists only in this process (the software card, a replay): it is certified by the test CA, and
    /// without a state file its pairings need no file either.
    public let isSoftware: Bool
}

extension CardTransport {
    /// Writes the transcript, if one is recorded (mode 0600: PAIR cryptograms and secure channel set-ups are in it).
    public func writeRecording() throws {
        guard let recorder, let recordPath else { return }
        do {
            try AtomicFile.write(Array(recorder.transcript.text.utf8), to: recordPath, mode: 0o600)
        } catch let error as AtomicFile.WriteError {
            throw CardServiceError(kind: "record", "cannot write transcript \(recordPath): \(error.problem)")
        }
    }
}

/// The one card opener: a request (`CardOpenRequest`) and a front end (`CardFrontEnd`) → a `CardSession`, for Lua's
/// `card.open{}` and every command that opens a card.
///
/// It opens in two steps so that another card family can plug in behind it: `transport` picks the reader (or the
/// software card, or a replay) and builds the channel stack, which is the same for any card; `open` puts the Keycard
/// command set, its certificate authorities and the pairing store on top. A second family adds its own `open` over
/// the same transport.
public enum CardOpener {
    /// The Keycard session over the request's transport, not yet SELECTed.
    public static func open(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd) throws -> CardSession {
        try open(request, transport: try self.transport(request, readers: readers, frontEnd: frontEnd), frontEnd: frontEnd)
    }

    /// The Keycard session over `transport` (opened for `request`), not yet SELECTed.
    public static func open(_ request: CardOpenRequest, transport: CardTransport, frontEnd: CardFrontEnd) throws -> CardSession {
        let card = KeycardCommandSet(channel: transport.channel, random: random(request), trustedCAKeys: trustedCAKeys(request, transport))
        let store: PairingStore
        switch request.pairingStore {
        case .automatic:
            store = PairingStore(transport.isSoftware && request.state == nil ? .memory : .file(PairingStore.defaultPath()))
        case .memory: store = PairingStore(.memory)
        case .file(let path): store = PairingStore(.file(path))
        }
        return CardSession(transport: transport, card: card, store: store, frontEnd: frontEnd)
    }

    /// This host's randomness for a session: repeatable with the request's seed (tests, transcripts).
    static func random(_ request: CardOpenRequest) -> RandomSource {
        request.seed.map { SeededRandom(seed: Array("\(CardFrontEnd.SeedDomain.client)\($0)".utf8)) } ?? SystemRandom()
    }

    /// The Keycard certificate authorities: Status' own, the request's, and the software card's test CA for software cards.
    static func trustedCAKeys(_ request: CardOpenRequest, _ transport: CardTransport) -> [PublicKey] {
        var trusted = IdentityCertificate.defaultCAKeys + request.trustedCAKeys
        if transport.isSoftware { trusted.append(SoftKeycard.testCAKey().publicKey) }
        return trusted
    }

    /// The reader (or software card, or replay) the request names, with recording below tracing so the trace shows
    /// what was recorded.
    public static func transport(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd) throws -> CardTransport {
        let readerName: String
        var base: CardChannel
        var virtualCard: SoftKeycard?
        var virtualFamily: CardFamily?
        var isSoftware = true
        if let replay = request.replay {
            let text: String
            do {
                let bytes = try BoundedFile.read(replay, limit: 64 * BoundedFile.mebibyte)
                guard let decoded = String(validating: bytes, as: UTF8.self) else {
                    throw BoundedFile.ReadError(path: replay, problem: "is not UTF-8 text")
                }
                text = decoded
            } catch let error as BoundedFile.ReadError {
                throw CardServiceError(kind: "bad_transcript", "cannot read transcript \(replay): \(error.problem)")
            }
            base = try CardServiceError.mapping(nil) { try ReplayChannel(text: text) }
            readerName = "replay \(PathText.lastComponent(replay))"
        } else if request.isVirtual {
            let family = try CardServiceError.mapping(nil) { try VirtualCards.family(request) }
            virtualFamily = family
            readerName = CardReaders.virtual
            if family == .keycard {
                var options = SoftKeycardOptions()
                if let applet = request.applet { options.appletVersion = applet }
                if let slots = request.pairingSlots { options.pairingSlots = slots }
                if let seed = request.seed { options.randomSeed = Array("\(CardFrontEnd.SeedDomain.virtualCard)\(seed)".utf8) }
                let card = try CardServiceError.mapping(nil) {
                    try VirtualCards.open(state: request.state, options: options, appletGiven: request.applet != nil)
                }
                virtualCard = card
                base = card
            } else {
                base = try CardServiceError.mapping(nil) { try VirtualCards.open(family, request) }
            }
        } else {
            if request.namesSoftwareCard {
                throw CardServiceError(kind: "invalid_argument", "a state file, an applet version, a number of pairing slots and a seed are for "
                                       + "the software card only (\(frontEnd.virtualCard))")
            }
            let entry = try ReaderChoice.choose(request.reader, sources: readers, frontEnd: frontEnd, wait: request.connect.wait)
            guard let source = entry.source else {
                throw CardServiceError(kind: "no_reader", "no card reader found; use \(frontEnd.virtualCard) for the software card")
            }
            readerName = entry.name
            base = try CardServiceError.mapping(nil) { try source.connect(reader: entry.name, options: request.connect) }
            isSoftware = false
        }
        var recorder: RecordingChannel?
        if request.record != nil {
            let recording = RecordingChannel(base)
            recorder = recording
            base = recording
        }
        let counter = CountingChannel(base)
        base = counter
        var tracer: TracingChannel?
        if let plaintext = request.trace {
            let tracing = TracingChannel(base, showsPlaintext: plaintext)
            tracer = tracing
            base = tracing
        }
        return CardTransport(readerName: readerName, channel: base, virtualCard: virtualCard, virtualFamily: virtualFamily,
                             recorder: recorder, recordPath: request.record,
                             tracer: tracer, counter: counter, isSoftware: isSoftware)
    }
}
