import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif

/// How far `CardConnection` takes the card before handing it over.
public enum CardAccess: Sendable {
    /// SELECTed only (`keyhost card info`, `init`, `pair`, `factory-reset`).
    case selected
    /// Secure channel open: on 3.x with this host's stored pairing, else a new one (pairing password needed).
    case secureChannel
    /// Secure channel open and PIN verified.
    case pinVerified
}

/// What the card must hold for the command to make sense; checked right after SELECT.
public enum CardRequirement: Sendable {
    case anything
    case initialized
    case masterKey
}

/// A Keycard opened for a command (`keyhost card …`, `keyhost discover --card`, `keyhost token wallet init --card`,
/// `keyhost token run`): connected, and as far as `access` says (by default secure channel open and PIN verified).
/// Secrets come from the given bytes, else `KEYHOST_PIN` / `KEYHOST_PAIRING_PASSWORD`, else a prompt on the terminal
/// with echo off; pairings live in the usual pairing store. The session logic is `CardSession`'s, as Lua's `s:auto`, `s:init`, ….
public final class CardConnection {
    let session: CardSession
    private let counter: CountingChannel
    /// The command set over the open, PIN-verified secure channel.
    public let card: KeycardCommandSet
    /// The reader's name (`virtual` for the software card).
    public let readerName: String
    /// What SELECT answered when the connection was made.
    public let selectInfo: ApplicationInfo

    /// - Parameters:
    ///   - reader: "virtual", a reader name (or a unique part of one), a number as `keyhost card list` prints it, or nil/""
    ///     for the first reader with a card (`ReaderChoice`).
    ///   - connectOptions: how to connect to a real reader (wait for a card, exclusive, protocol).
    ///   - cardState: for the virtual reader, the state file of a card set up before (`card.open{reader="virtual", state=…}`).
    ///   - virtualHint: how the command's options pick the software card, for messages (`--card virtual --card-state FILE`).
    ///   - newCardApplet: for a virtual card whose state file does not exist yet, the applet to emulate (3.2 when nil);
    ///     an existing state file holding another applet is refused.
    ///   - access, requirement: how far to open the card, and what it must hold.
    ///   - commandLine: word hints and missing-secret errors for `keyhost card …` rather than for Lua, and throw
    ///     structured errors (`no_key`, `not_initialized`) instead of `CardSetupError` for the card's state.
    /// `trustedCAKeys` are added to Status' own certificate authorities (4.x cards' identity certificates).
    public init(reader: String?, cardState: String?, newCardApplet: AppletVersion? = nil, readers: [CardReaderSource],
                connectOptions: CardConnectOptions = CardConnectOptions(),
                pin: [UInt8]?, pairingPassword: [UInt8]?, trustedCAKeys: [PublicKey], virtualHint: String,
                access: CardAccess = .pinVerified, requirement: CardRequirement = .masterKey, commandLine: Bool = false) throws {
        let wanted = (reader ?? "").trimmingWhitespace()
        var base: CardChannel
        var virtualCard: SoftKeycard?
        let isVirtual = wanted.lowercased() == CardReaders.virtual
        if isVirtual {
            var options = SoftKeycardOptions()
            if let newCardApplet { options.appletVersion = newCardApplet }
            let card = try CardServiceError.mapping(nil) { try VirtualCards.open(state: cardState, options: options, appletGiven: newCardApplet != nil) }
            virtualCard = card
            base = card
            readerName = CardReaders.virtual
        } else {
            if cardState != nil { throw CardSetupError("the card state file is for the virtual card only (\(virtualHint))", kind: "invalid_argument") }
            let entry = try ReaderChoice.choose(wanted, sources: readers, virtualHint: virtualHint, wait: connectOptions.wait)
            guard let source = entry.source else { throw CardSetupError("no card reader found; use \(virtualHint) for the software card", kind: "no_reader") }
            readerName = entry.name
            base = try CardServiceError.mapping(nil) { try source.connect(reader: entry.name, options: connectOptions) }
        }
        counter = CountingChannel(base)
        base = counter
        var tracer: TracingChannel?
        if let plaintext = CardTrace.fromEnvironment() {
            let tracing = TracingChannel(base, showsPlaintext: plaintext)
            tracer = tracing
            base = tracing
        }
        var trusted = IdentityCertificate.defaultCAKeys + trustedCAKeys
        if isVirtual { trusted.append(SoftKeycard.testCAKey().publicKey) }
        let card = KeycardCommandSet(channel: base, random: SystemRandom(), trustedCAKeys: trusted)
        let store = PairingStore(isVirtual && cardState == nil ? .memory : .file(PairingStore.defaultPath()))
        let name = readerName
        let object = CardSession(readerName: name, card: card, virtualCard: virtualCard, recorder: nil, recordPath: nil,
                                 tracer: tracer, store: store)
        if commandLine {
            object.pinInput = SecretInput.pin.forCommandLine
            object.passwordInput = SecretInput.pairingPassword.forCommandLine
        }
        // A host that finds every slot taken is told so (no_free_slot) rather than carried on a temporary pairing.
        object.ephemeralFallback = false
        object.pairingNotice = { _ = WriteAll.write(STDERR_FILENO, Array("keyhost: \($0)\n".utf8)) }
        // Every caller is a command, so an unknown CA's hint names --trusted-ca whichever wording the rest takes.
        let call: (String?, () throws -> ApplicationInfo) throws -> ApplicationInfo = { command, body in
            do {
                return try commandLine ? CardServiceError.mappingForCommandLine(command, body) : CardServiceError.mapping(command, body)
            } catch let error as CardServiceError where ["untrusted_card", "no_free_slot"].contains(error.kind) {
                throw error.forCommandLine
            }
        }
        let info = try call("SELECT") { try object.select(card) }
        if requirement != .anything {
            guard info.isInitialized else {
                if commandLine {
                    throw CardServiceError(kind: "not_initialized", isVirtual
                        ? "the virtual card is blank; set it up with keyhost card init \(virtualHint)"
                        : "the card in \(name) is not initialised; set it up with keyhost card init")
                }
                throw CardSetupError(isVirtual
                    ? "the virtual card is blank: give the state file of a software card set up with keyhost card init and load-seed "
                        + "(or keyhost.card in Lua): \(virtualHint)"
                    : "the card in \(name) is not initialised; set it up with keyhost card init", kind: "not_initialized")
            }
        }
        if requirement == .masterKey && !info.hasMasterKey {
            let hint = commandLine ? "load one with keyhost card load-seed or generate one with keyhost card generate-key" : "load or generate one first"
            if commandLine { throw CardServiceError(kind: "no_key", "the card in \(name) has no key loaded; \(hint)") }
            throw CardSetupError("the card in \(name) has no key loaded; \(hint)", kind: "no_key")
        }
        switch access {
        case .selected: break
        case .secureChannel: _ = try call(nil) { _ = try object.openChannel(card, password: pairingPassword); return info }
        case .pinVerified: _ = try call(nil) { _ = try object.auto(card, pin: pin, password: pairingPassword); return info }
        }
        session = object
        self.card = card
        selectInfo = info
    }

    /// Lets a command that frees slots (`unpair --others`) in through the card's temporary slot when all are taken.
    public func allowTemporaryPairing() { session.ephemeralFallback = true }

    /// The 3.x card's pairing slots in use; call before `open`, whose channel the probes would reset (see
    /// `CardSession.occupiedPairingSlots`).
    public func occupiedPairingSlots() throws -> [Int] {
        try CardServiceError.mappingForCommandLine("OPEN SECURE CHANNEL") { try session.occupiedPairingSlots(card) }
    }

    /// APDUs sent so far (SELECT, secure channel, VERIFY PIN included).
    public var apduCount: Int { counter.count }

    /// Drops the secure channel.
    public func close() { session.close() }
}
