import KeyhostCard
import KeyhostCrypto

/// A TAPSIGNER or SATSCARD opened for its family's own commands (`keyhost card tapsigner …`, `card satscard …`):
/// selected, checked to be the product asked for, its CVC back-off refused or waited out. The CVC is asked for
/// only by the commands that need it.
public final class TapCardSession {
    public let card: CKTapCommandSet
    public let readerName: String
    public let frontEnd: CardFrontEnd
    private let transport: CardTransport
    private var closed = false

    /// The card `request` names, which must be a `product` (`.tapsigner` or `.satscard`); a software card of that
    /// product is made when its state file does not exist yet.
    public static func open(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd, product: CardFamily) throws -> TapCardSession {
        var request = request
        if request.isVirtual { request.family = product }
        let transport = try frontEnd.mapping(nil) { try CardOpener.transport(request, readers: readers, frontEnd: frontEnd) }
        let card = CKTapCommandSet(channel: transport.channel, random: CardOpener.random(request))
        let status: CKTapStatus
        do {
            status = try frontEnd.mapping("select") { try card.select() }
        } catch let error as CardServiceError where error.kind == "status_word" {
            throw CardServiceError(kind: "wrong_card", "the card in \(transport.readerName) is no \(product) (it has no tap-card applet); "
                                   + "check the card and the reader")
        }
        let isTapsigner = product == .tapsigner
        guard status.isTapsigner == isTapsigner else {
            throw CardServiceError(kind: "wrong_card", "the card in \(transport.readerName) is a \(status.product.rawValue), not a \(product); "
                                   + "use the \(isTapsigner ? "SATSCARD" : "TAPSIGNER") commands for it")
        }
        try CardOpener.waitOutBackoff(card, status, readerName: transport.readerName, frontEnd: frontEnd)
        return TapCardSession(card: card, readerName: transport.readerName, frontEnd: frontEnd, transport: transport)
    }

    private init(card: CKTapCommandSet, readerName: String, frontEnd: CardFrontEnd, transport: CardTransport) {
        self.card = card
        self.readerName = readerName
        self.frontEnd = frontEnd
        self.transport = transport
    }

    /// The status read at open (or since).
    public var status: CKTapStatus? { card.status }

    /// The CVC, from the front end's input (environment variable or prompt).
    public func cvc() throws -> SecretBytes { try frontEnd.cvc.resolve(nil) }

    /// Runs `body` with its card errors worded for the front end.
    public func mapping<R>(_ command: String, _ body: () throws -> R) throws -> R { try frontEnd.mapping(command, body) }

    /// APDUs sent so far.
    public var apduCount: Int { transport.counter.count }

    /// The card as a signer of the interface every family shares, over this session (closing it ends only the signer).
    public func signingCard(cvc: [UInt8]?) throws -> SigningCard {
        let status = try mapping("status") { try card.getStatus() }
        let (signer, identity, forget) = try CardOpener.tapSigner(card, status, readerName: readerName, frontEnd: frontEnd, cvc: cvc)
        let transport = self.transport
        return SigningCard(signer: signer, readerName: readerName, frontEnd: frontEnd, identity: identity,
                           apdus: { transport.counter.count }, close: forget)
    }

    /// Ends the session (writes the transcript, if recorded); later calls do nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        try? transport.writeRecording()
    }
}
