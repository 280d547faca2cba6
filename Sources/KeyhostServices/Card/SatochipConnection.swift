import KeyhostCard
import KeyhostCrypto

/// A Satochip opened for a command (`keyhost card satochip …`, `card info`) or for signing (`openSigner`): the
/// transport `CardOpener` built, the command set SELECTed, and what GET STATUS told. One opener for both, so the
/// signer and the commands check the card alike.
public final class SatochipConnection {
    public let transport: CardTransport
    public let card: SatochipCommandSet
    /// GET STATUS as of the last `refreshStatus()` (SELECT's at first).
    public private(set) var status: SatochipStatus
    public let frontEnd: CardFrontEnd
    /// The CA keys a device certificate may chain to: the request's, and the software card's test CA for a card that
    /// lives in this process only (a card in a reader, even one keyhost serves, is never trusted by it).
    public let trustedCAKeys: [PublicKey]
    public var readerName: String { transport.readerName }

    /// SELECT the Satochip applet over `transport` (opened for `request`).
    public init(_ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd) throws {
        let card = SatochipCommandSet(channel: transport.channel, random: CardOpener.random(request))
        self.transport = transport
        self.card = card
        self.frontEnd = frontEnd
        trustedCAKeys = request.trustedCAKeys + (transport.isSoftware ? [SoftSatochip.testCAKey().publicKey] : [])
        status = try Self.mapping("SELECT") { try card.select() }
    }

    /// The Satochip `request` names: a software one (`request.state`, created when the file is not there yet) or the
    /// card in a reader, refused (`wrong_card`) when it holds no Satochip applet.
    public static func open(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd) throws -> SatochipConnection {
        var request = request
        if request.isVirtual { request.family = .satochip }
        let transport = try frontEnd.mapping(nil) { try CardOpener.transport(request, readers: readers, frontEnd: frontEnd) }
        return try SatochipConnection(transport, request, frontEnd: frontEnd)
    }

    /// Runs `body`, card errors as structured errors (the Satochip client's wording, which names no front end).
    public static func mapping<R>(_ command: String?, _ body: () throws -> R) throws -> R {
        try CardServiceError.mapping(command, body)
    }

    /// GET STATUS again (tries left change with every PIN check).
    @discardableResult
    public func refreshStatus() throws -> SatochipStatus {
        status = try Self.mapping("GET STATUS") { try card.getStatus() }
        return status
    }

    /// Refuses a card not set up yet (`not_initialized`).
    public func requireSetUp() throws {
        guard status.isSetupDone else {
            throw CardServiceError(kind: "not_initialized", "the Satochip in \(readerName) is not set up; \(frontEnd.satochipSetUp)")
        }
    }

    /// Refuses a card without a seed (`no_key`).
    public func requireSeed() throws {
        try requireSetUp()
        guard status.isSeeded else {
            throw CardServiceError(kind: "no_key", "the Satochip in \(readerName) holds no seed; \(frontEnd.satochipImportSeed)")
        }
    }

    /// VERIFY PIN with `pin`, else the front end's PIN input (environment variable, prompt).
    public func verifyPIN(_ pin: [UInt8]? = nil) throws {
        let secret = try frontEnd.pin.resolve(pin)
        try Self.mapping("VERIFY PIN") { try card.verifyPIN(secret) }
    }

    /// The authenticity check (PIN verified): the device certificate must chain to one of `trustedCAKeys` and the
    /// card must prove it holds the certificate's key. A card that fails it is a verdict, not an error.
    public func certificate() throws -> SatochipTrust {
        do {
            let result = try Self.mapping("EXPORT PKI CERTIFICATE") { try card.verifyAuthenticity(caKeys: trustedCAKeys) }
            return SatochipTrust(isTrusted: true, deviceKey: result.deviceKey.compressed, caKey: result.issuer.compressed,
                                 subject: result.certificate.subjectCommonName, problem: nil)
        } catch let error as CardServiceError where error.kind == "untrusted_card" {
            return SatochipTrust(isTrusted: false, deviceKey: nil, caKey: nil, subject: nil, problem: error.text)
        }
    }

    /// Drops the secure channel and writes the transcript, if one is recorded.
    public func close() {
        card.closeSecureChannel()
        try? transport.writeRecording()
    }
}

/// Whether a Satochip's device certificate chains to a trusted CA and the card holds its key.
public struct SatochipTrust: Sendable, Equatable {
    public let isTrusted: Bool
    /// The device key the certificate names (compressed), when the check went through.
    public let deviceKey: [UInt8]?
    /// The trusted CA key that signed it (compressed).
    public let caKey: [UInt8]?
    /// The certificate's subject (the card's serial in Satochip's PKI).
    public let subject: String?
    /// Why the card is not trusted.
    public let problem: String?
}
