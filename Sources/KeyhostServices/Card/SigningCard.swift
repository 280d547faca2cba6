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
    /// A stable name for the key the card holds (its key UID: SHA-256 of the master public key), keying discovery
    /// checkpoints; asked only when needed, since some families spend a command on it.
    public let identity: () throws -> [UInt8]
    /// The Keycard session under a Keycard's signer; nil for other families.
    public let keycard: CardConnection?
    private let countAPDUs: () -> Int
    private let end: () -> Void
    private var closed = false

    /// A card of any family: `apdus` counts what was sent, `close` ends its session.
    public init(signer: CardSigner, readerName: String, frontEnd: CardFrontEnd, identity: @escaping () throws -> [UInt8],
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
        let uid = info?.keyUID ?? info?.instanceUID ?? []
        identity = { uid }
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
