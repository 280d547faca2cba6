import KeyhostCard

/// A card opened for a command that exports keys or signs (`--card` of `key`, `psbt`, `eth`, `discover`, card-bound
/// tokens), whatever its family: the family's session taken as far as signing needs, behind one `CardSigner`.
/// `CardOpener.openSigner` makes it; `close` ends the session (drops secure channel keys, writes a transcript).
public final class SigningCard {
    /// What the commands call: key exports and signatures at paths.
    public let signer: CardSigner
    /// The reader's name (`virtual` for a software card).
    public let readerName: String
    /// Who the card talks to (errors' wording, secrets' sources).
    public let frontEnd: CardFrontEnd
    /// A stable name for the key the card holds (a Keycard's key UID), keying discovery checkpoints.
    public let identity: [UInt8]
    /// The Keycard session under a Keycard's signer; nil for other families.
    public let keycard: CardConnection?
    private let countAPDUs: () -> Int
    private let end: () -> Void
    private var closed = false

    /// A card of any family: `apdus` counts what was sent, `close` ends its session.
    public init(signer: CardSigner, readerName: String, frontEnd: CardFrontEnd, identity: [UInt8],
                apdus: @escaping () -> Int, close: @escaping () -> Void) {
        self.signer = signer
        self.readerName = readerName
        self.frontEnd = frontEnd
        self.identity = identity
        keycard = nil
        countAPDUs = apdus
        end = close
    }

    /// A Keycard, secure channel open and PIN verified.
    public init(keycard connection: CardConnection) {
        signer = connection.signer
        readerName = connection.readerName
        frontEnd = connection.frontEnd
        let info = connection.card.applicationInfo
        identity = info?.keyUID ?? info?.instanceUID ?? []
        keycard = connection
        countAPDUs = { connection.apduCount }
        end = { connection.close() }
    }

    /// APDUs sent so far (selection, secure channel and PIN included).
    public var apduCount: Int { countAPDUs() }

    /// Ends the card's session; later calls do nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        end()
    }

    /// Runs `body`, its card errors worded for this card's front end; `command` names the step for errors that do not.
    public func mapping<R>(_ command: String?, _ body: () throws -> R) throws -> R {
        try frontEnd.mapping(command, body)
    }
}

extension CardOpener {
    /// The card `request` names, opened for signing: today a Keycard (secure channel, PIN from `pin` or the front
    /// end's inputs); a family without a session to open behind its signer plugs in here.
    public static func openSigner(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd, pin: [UInt8]? = nil,
                                  pairingPassword: [UInt8]? = nil) throws -> SigningCard {
        SigningCard(keycard: try CardConnection(request, readers: readers, frontEnd: frontEnd, pin: pin, pairingPassword: pairingPassword))
    }
}
