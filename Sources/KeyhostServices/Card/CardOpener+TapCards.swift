import KeyhostCard
import KeyhostCrypto

extension CardOpener {
    /// A TAPSIGNER or SATSCARD over `transport`, selected, its CVC back-off refused or (when the front end asks)
    /// waited out; the CVC from `cvc`, else the front end's input (a SATSCARD asks for it only when it signs).
    static func openTapCard(_ transport: CardTransport, _ request: CardOpenRequest, frontEnd: CardFrontEnd, cvc: [UInt8]?) throws -> SigningCard {
        let card = CKTapCommandSet(channel: transport.channel, random: random(request))
        let name = transport.readerName
        let status = try frontEnd.mapping("select") { try card.select() }
        try waitOutBackoff(card, status, readerName: name, frontEnd: frontEnd)
        let (signer, identity, forget) = try tapSigner(card, status, readerName: name, frontEnd: frontEnd, cvc: cvc)
        return SigningCard(signer: signer, readerName: name, frontEnd: frontEnd, identity: identity,
                           apdus: { transport.counter.count }, close: {
            forget()
            try? transport.writeRecording()
        })
    }

    /// The signer of a selected TAPSIGNER or SATSCARD, what names its key, and what forgets its CVC.
    static func tapSigner(_ card: CKTapCommandSet, _ status: CKTapStatus, readerName name: String, frontEnd: CardFrontEnd,
                          cvc: [UInt8]?) throws -> (CardSigner, () throws -> [UInt8], () -> Void) {
        if status.isTapsigner {
            guard status.path != nil else {
                throw CardServiceError(kind: "not_initialized", "the TAPSIGNER in \(name) is blank: it holds no key until it is set up "
                                       + "(\(frontEnd.tapsignerSetUp))")
            }
            let tapsigner = TapsignerSigner(card: card, cvc: try frontEnd.cvc.resolve(cvc))
            return (tapsigner, { try CardHolder.keyUID(tapsigner) }, { tapsigner.close() })
        }
        let slot = try frontEnd.mapping("dump") { try SatscardSigner.slotToUse(card) }
        let satscard = SatscardSigner(card: card, slot: slot, cvc: { try frontEnd.cvc.resolve(cvc) })
        // A SATSCARD has no master to name it by: its slot's key does.
        return (satscard, { Hash.sha256(try satscard.publicKey(at: SatscardSigner.slotPath).uncompressed) }, { satscard.close() })
    }

    /// The card's CVC back-off (after wrong CVCs): refused with the seconds left, or spent with `wait` when the front end asks.
    static func waitOutBackoff(_ card: CKTapCommandSet, _ status: CKTapStatus, readerName: String, frontEnd: CardFrontEnd) throws {
        guard status.authDelay > 0 else { return }
        let product = status.isTapsigner ? "TAPSIGNER" : "SATSCARD"
        guard frontEnd.waitBackoff else {
            throw CardServiceError(kind: "rate_limited", "the \(product) in \(readerName) is in its CVC back-off after wrong CVCs: "
                                   + "\(status.authDelay) s left before it checks a CVC again (429); \(frontEnd.waitBackoffAdvice)")
        }
        frontEnd.notice?("the \(product) is in its CVC back-off after wrong CVCs: waiting out \(status.authDelay) s")
        var left = status.authDelay
        // Each `wait` spends about a second; the card never owes more than an hour.
        for _ in 0...3600 where left > 0 {
            left = try frontEnd.mapping("wait") { try card.wait() }
        }
        guard left == 0 else {
            throw CardServiceError(kind: "rate_limited", "the \(product) in \(readerName) still owes \(left) s of back-off; try again later")
        }
    }
}
