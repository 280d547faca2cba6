import KeyhostCrypto

/// A SATSCARD as a `CardSigner`: its active slot's one key, at m/0 of the slot's master (the card's fixed path).
/// The public key comes from `read` (proven by the card and checked against the address status shows); signatures
/// only once the slot is unsealed, checked against that key. Nothing else: a SATSCARD holds no HD wallet.
public final class SatscardSigner: CardSigner {
    public let card: CKTapCommandSet
    /// The slot it signs with, as `dump` showed it when the card was opened: the active one, or once that is unused
    /// (an unseal moves the card to the next slot), the one unsealed before it.
    public let slot: CKTapSlot
    private var cvcSource: (() throws -> SecretBytes)?
    private var cvc: SecretBytes?
    private var slotKey: PublicKey?

    /// The slot's path below its master: every SATSCARD key is m/0.
    public static let slotPath: [UInt32] = [0]

    /// `card` selected, `slot` the one to use (`dump` without the CVC; see `slotToUse`); `cvc` is asked for once, when signing.
    public init(card: CKTapCommandSet, slot: CKTapSlot, cvc: @escaping () throws -> SecretBytes) {
        self.card = card
        self.slot = slot
        self.cvcSource = cvc
    }

    public var profile: CardSignerProfile {
        CardSignerProfile(family: "SATSCARD", version: card.status?.version ?? "", abilities: [.ecdsa])
    }

    /// Refuses every path but m/0, extended keys, Schnorr, an unused slot and signing with a sealed one.
    public func check(_ operation: CardSignerOperation, path: [UInt32]) throws {
        let slotName = "slot \(slot.slot)"
        switch operation {
        case .extendedKey:
            throw CardSignerError.unsupported(profile, operation, instead: "it holds one key per slot, with no account to derive from: "
                                              + "ask for the public key or the address at m/0 (keyhost card satscard read)")
        case .signSchnorr:
            throw CardSignerError.unsupported(profile, operation, instead: "it signs with ECDSA, with an unsealed slot's key at m/0")
        case .publicKey, .signECDSA:
            break
        }
        guard path == Self.slotPath else {
            throw CardSignerError(kind: "invalid_path", "a SATSCARD holds one key per slot, at m/0 of the slot's own master; "
                                  + "\(CardSignerError.pathText(path)) is not on the card: use the path m/0")
        }
        if slot.state == .unused {
            throw CardSignerError(kind: "no_key", "the SATSCARD's \(slotName) is unused; start it with keyhost card satscard new")
        }
        if operation == .signECDSA && slot.state == .sealed {
            throw CardSignerError(kind: "sealed", "the SATSCARD's \(slotName) is sealed: it signs only once unsealed "
                                  + "(keyhost card satscard unseal --slot \(slot.slot), which reveals the key for good)")
        }
    }

    public func publicKey(at path: [UInt32]) throws -> PublicKey {
        try check(.publicKey, path: path)
        return try key()
    }

    public func extendedKey(at path: [UInt32]) throws -> CardExtendedPublicKey {
        try check(.extendedKey, path: path)
        throw CardSignerError.unsupported(profile, .extendedKey, instead: "ask for the public key at m/0")
    }

    public func signECDSA(digest: [UInt8], at path: [UInt32]) throws -> CardECDSASignature {
        try check(.signECDSA, path: path)
        guard let source = cvcSource else { throw CardSignerError(kind: "no_secret", "the SATSCARD session is closed; open the card again") }
        let cvc = try self.cvc ?? source()
        self.cvc = cvc
        let expected = try key()
        let signed = try card.sign(digest: digest, slot: slot.slot, cvc: cvc)
        guard signed.publicKey.compressed == expected.compressed else {
            throw CardSignerError.wrongKey(profile, path: path, expected: expected.compressed, got: signed.publicKey.compressed)
        }
        guard let recoverable = RecoverableSignature(signed.signature, digest: digest, key: expected) else {
            throw CardSignerError.invalidResponse(profile, "no recovery id of the signature gives the slot's key")
        }
        return CardECDSASignature(signature: recoverable, publicKey: expected)
    }

    public func signSchnorr(digest: [UInt8], at path: [UInt32], taproot: TaprootSpend?) throws -> CardSchnorrSignature {
        try check(.signSchnorr, path: path)
        throw CardSignerError.unsupported(profile, .signSchnorr, instead: "it signs with ECDSA")
    }

    /// The slot a signer uses: the active one when used, else the one before it (unsealed), as `dump` shows it.
    public static func slotToUse(_ card: CKTapCommandSet) throws -> CKTapSlot {
        let status = try card.knownStatus()
        let active = min(status.activeSlot, status.numSlots - 1)
        let slot = try card.dump(slot: active)
        if (slot.state == .unused || status.activeSlot >= status.numSlots), status.activeSlot > 0 {
            return try card.dump(slot: min(status.activeSlot, status.numSlots) - 1)
        }
        return slot
    }

    /// Forgets the CVC.
    public func close() {
        cvc = nil
        cvcSource = nil
    }

    /// The slot's key: a sealed (active) slot's from `read`, proven by the card's signature over our nonce and its
    /// address checked against status; an unsealed one's (the card has moved past it) as `dump` showed it, checked
    /// against its address there, and every signature is checked against it.
    private func key() throws -> PublicKey {
        if let slotKey { return slotKey }
        let key: PublicKey
        if slot.state == .unsealed {
            guard let shown = slot.publicKey else { throw CardSignerError.invalidResponse(profile, "dump shows no key for unsealed slot \(slot.slot)") }
            key = shown.compressed(true)
        } else {
            key = try card.readSlot().publicKey.compressed(true)
        }
        slotKey = key
        return key
    }
}
