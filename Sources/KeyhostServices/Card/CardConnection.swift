import KeyhostCard
import KeyhostCrypto

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

/// A Keycard opened for a command (`keyhost card …`, `--card` of the other commands, `keyhost discover --card`):
/// `CardOpener`'s session, SELECTed, checked against what the command needs and opened as far as `access` says (by
/// default secure channel open and PIN verified). Secrets come from the given bytes, else the front end's inputs
/// (environment variable, prompt); the session logic is `CardSession`'s, as Lua's `s:auto`, `s:init`, ….
public final class CardConnection {
    /// The session (pairing store, secure channel, front end).
    public let session: CardSession
    /// The command set over the open, PIN-verified secure channel.
    public let card: KeycardCommandSet
    /// The reader's name (`virtual` for the software card).
    public let readerName: String
    /// What SELECT answered when the connection was made.
    public let selectInfo: ApplicationInfo
    /// Who the connection talks to (its errors' hints, its secrets' sources).
    public var frontEnd: CardFrontEnd { session.frontEnd }

    /// - Parameters:
    ///   - request: what to open (`CardOpenRequest`).
    ///   - frontEnd: how errors are worded and where secrets come from (`CardFrontEnd.commandLine()` for commands).
    ///   - pin, pairingPassword: given secrets; nil to take them from the front end's inputs.
    ///   - access, requirement: how far to open the card, and what it must hold.
    public convenience init(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd, pin: [UInt8]? = nil,
                            pairingPassword: [UInt8]? = nil, access: CardAccess = .pinVerified, requirement: CardRequirement = .masterKey) throws {
        let session = try frontEnd.mapping(nil) { try CardOpener.open(request, readers: readers, frontEnd: frontEnd) }
        try self.init(request, session: session, pin: pin, pairingPassword: pairingPassword, access: access, requirement: requirement)
    }

    /// The same over a session already opened (by `CardOpener.open(_:transport:frontEnd:)`).
    public init(_ request: CardOpenRequest, session: CardSession, pin: [UInt8]? = nil, pairingPassword: [UInt8]? = nil,
                access: CardAccess = .pinVerified, requirement: CardRequirement = .masterKey) throws {
        let frontEnd = session.frontEnd
        guard let card = session.card else { throw CardServiceError(kind: "connection_lost", "the card session closed while opening") }
        let name = session.readerName
        let info = try frontEnd.mapping("SELECT") { try session.select(card) }
        if requirement != .anything && !info.isInitialized {
            throw CardServiceError(kind: "not_initialized", request.isVirtual
                ? "the virtual card is blank; set it up with \(frontEnd.setUp) (\(frontEnd.virtualCard))"
                : "the card in \(name) is not initialised; set it up with \(frontEnd.setUp)")
        }
        if requirement == .masterKey && !info.hasMasterKey {
            throw CardServiceError(kind: "no_key", "the card in \(name) has no key loaded; \(frontEnd.loadKey)")
        }
        try frontEnd.mapping(nil) {
            switch access {
            case .selected: break
            case .secureChannel: _ = try session.openChannel(card, password: pairingPassword)
            case .pinVerified: _ = try session.auto(card, pin: pin, password: pairingPassword)
            }
        }
        self.session = session
        self.card = card
        readerName = name
        selectInfo = info
    }

    /// Lets a command that frees slots (`unpair --others`) in through the card's temporary slot when all are taken.
    public func allowTemporaryPairing() { session.frontEnd.temporaryPairing = true }

    /// The 3.x card's pairing slots in use; call before `open`, whose channel the probes would reset (see
    /// `CardSession.occupiedPairingSlots`).
    public func occupiedPairingSlots() throws -> [Int] {
        try frontEnd.mapping("OPEN SECURE CHANNEL") { try session.occupiedPairingSlots(card) }
    }

    /// APDUs sent so far (SELECT, secure channel, VERIFY PIN included).
    public var apduCount: Int { session.apduCount }

    /// The card as a signer (key exports and signatures at paths), for the commands that take any card.
    public var signer: CardSigner { KeycardSigner(card: card) }

    /// Drops the secure channel.
    public func close() { session.close() }
}
