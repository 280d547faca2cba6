import KeyhostBitcoin
import KeyhostCard
import KeyhostCrypto

/// A card as a PSBT signer, whatever its family: each input's sighash goes to the card's signer with the key's
/// path (one command per signature); taproot inputs are signed with Schnorr by cards that can, with the BIP341
/// tweak of the internal key the PSBT lists.
///
/// The card is not trusted to sign with the right key: the public key in its answer must be the key the PSBT lists
/// (a fingerprint collision or a different seed is an error), and every signature is checked (by the signer).
public final class PSBTCardKeySource: PSBTKeySource {
    private let signer: CardSigner
    public let masterFingerprint: UInt32?
    public let supportsSchnorr: Bool
    /// Signatures asked of the card, for the benchmark's APDUs-per-input figure.
    public private(set) var signCount = 0

    /// Reads the master key's fingerprint (one export) from a card ready to sign.
    public init(signer: CardSigner) throws {
        self.signer = signer
        supportsSchnorr = signer.profile.abilities.contains(.schnorr)
        try signer.check(.publicKey, path: [])
        masterFingerprint = try signer.publicKey(at: []).fingerprint
    }

    /// A Keycard with an open, PIN-verified session.
    public convenience init(card: KeycardCommandSet) throws {
        try self.init(signer: KeycardSigner(card: card))
    }

    public func owns(publicKey: [UInt8], origin: KeyOrigin?) -> Bool { origin != nil && origin?.fingerprint == masterFingerprint }

    private func path(_ origin: KeyOrigin?) -> [UInt32]? {
        guard let origin, origin.fingerprint == masterFingerprint else { return nil }
        return origin.path.indexes
    }

    private func mismatch(_ shown: [UInt8], _ origin: KeyOrigin?) -> PSBTError {
        PSBTError(.signing, "the PSBT says key \(Hex.encode(shown)) is \(origin.map { "\($0)" } ?? "?"), but the card holds another key there; the PSBT was made for another wallet (or the card holds another seed)")
    }

    public func signECDSA(digest: [UInt8], publicKey: [UInt8], origin: KeyOrigin?) throws -> ECDSASignature? {
        guard let path = path(origin) else { return nil }
        try signer.check(.signECDSA, path: path)
        signCount += 1
        let answer = try signer.signECDSA(digest: digest, at: path)
        guard answer.publicKey.matches(publicKey) else { throw mismatch(publicKey, origin) }
        return answer.signature.signature.normalized()
    }

    public func signSchnorr(digest: [UInt8], internalKey: XOnlyPublicKey, origin: KeyOrigin?, merkleRoot: [UInt8]?) throws -> [UInt8]? {
        guard let path = path(origin) else { return nil }
        try signer.check(.signSchnorr, path: path)
        signCount += 1
        do {
            return try signer.signSchnorr(digest: digest, at: path, taproot: TaprootSpend(internalKey: internalKey, merkleRoot: merkleRoot)).signature
        } catch let error as CardSignerError where error.kind == "wrong_key" {
            throw mismatch(internalKey.bytes, origin)
        }
    }
}
