import KeyhostCard
import KeyhostCrypto

extension CardOpener {
    /// The card `request` names, opened for signing whatever its family: a Keycard (secure channel, PIN), else a
    /// Satochip (secure channel, PIN), a TAPSIGNER or a SATSCARD (CVC). The PIN comes from `pin`, else the front end's input. A real card is taken
    /// for a Keycard first, so a Keycard costs not one command more than before; only when it holds no Keycard
    /// applet are the other families' applets looked for.
    public static func openSigner(_ request: CardOpenRequest, readers: [CardReaderSource], frontEnd: CardFrontEnd, pin: [UInt8]? = nil,
                                  pairingPassword: [UInt8]? = nil, cvc: [UInt8]? = nil) throws -> SigningCard {
        let transport = try frontEnd.mapping(nil) { try self.transport(request, readers: readers, frontEnd: frontEnd) }
        if let family = transport.virtualFamily, family != .keycard {
            return try openSigner(family, transport, request, frontEnd: frontEnd, pin: pin, cvc: cvc)
        }
        let session = try frontEnd.mapping(nil) { try open(request, transport: transport, frontEnd: frontEnd) }
        do {
            return SigningCard(keycard: try CardConnection(request, session: session, pin: pin, pairingPassword: pairingPassword))
        } catch let error as CardServiceError where error.statusWord == .fileNotFound && transport.virtualFamily == nil {
            // No Keycard applet: which of the others does the card hold?
            let found = try frontEnd.mapping("SELECT") { try CardIdentification.identify(transport.channel).found }
            guard let family = found.first(where: { $0.family != .keycard })?.family else {
                throw CardServiceError(kind: "wrong_card", "the card in \(transport.readerName) holds no applet of a family that signs "
                                       + "(\(CardFamily.signing.map { "\($0)" }.joined(separator: ", "))); check the card and the reader",
                                       statusWord: error.statusWord)
            }
            return try openSigner(family, transport, request, frontEnd: frontEnd, pin: pin, cvc: cvc)
        }
    }

    /// A card of `family` other than Keycard, over `transport`.
    private static func openSigner(_ family: CardFamily, _ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd,
                                   pin: [UInt8]?, cvc: [UInt8]?) throws -> SigningCard {
        switch family {
        case .satochip:
            return try openSatochip(transport, request, frontEnd: frontEnd, pin: pin)
        case .seedkeeper:
            throw CardServiceError(kind: "unsupported", "the card in \(transport.readerName) is a SeedKeeper, which keeps secrets but holds no "
                                   + "signing key; export its seed, or sign with a Satochip, a Keycard or the mnemonic")
        case .tapsigner, .satscard:
            return try openTapCard(transport, request, frontEnd: frontEnd, cvc: cvc)
        case .keycard:
            throw CardServiceError(kind: "unsupported", "signing with a \(family) is not in this build")
        }
    }

    /// A Satochip, set up and seeded, its PIN verified over the secure channel.
    private static func openSatochip(_ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd,
                                     pin: [UInt8]?) throws -> SigningCard {
        let connection = try SatochipConnection(transport, request, frontEnd: frontEnd)
        try connection.requireSeed()
        try connection.verifyPIN(pin)
        let signer = SatochipSigner(card: connection.card)
        return SigningCard(signer: signer, readerName: connection.readerName, frontEnd: frontEnd, identity: { try CardHolder.keyUID(signer) },
                           apdus: { transport.counter.count }, close: { connection.close() })
    }
}

extension CardFamily {
    /// The families whose cards hold a signing key.
    public static let signing: [CardFamily] = [.keycard, .satochip, .tapsigner, .satscard]
}
