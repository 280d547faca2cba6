import KeyhostBitcoin
import KeyhostCard
import KeyhostCrypto

/// A Keycard as a PSBT signer: each input's sighash goes to SIGN with the key's path (one APDU per
/// signature); taproot inputs use Schnorr SIGN (applet 4.x) with the BIP341 tweak the host computes.
///
/// The card is not trusted to sign with the right key: the public key in its answer must be the key the
/// PSBT lists (a fingerprint collision or a different seed is an error), and every signature is checked.
public final class PSBTCardKeySource: PSBTKeySource {
    private let card: KeycardCommandSet
    public let masterFingerprint: UInt32?
    public let supportsSchnorr: Bool
    /// Signatures asked of the card, for the benchmark's APDUs-per-input figure.
    public private(set) var signCount = 0

    /// Reads the master key's fingerprint (one EXPORT KEY) from a card with an open, PIN-verified session.
    public init(card: KeycardCommandSet) throws {
        self.card = card
        supportsSchnorr = (card.applicationInfo?.version.major ?? 0) >= 4
        guard let master = try card.exportKey(.publicOnly, path: KeyPath(source: .master, components: [])).resolvedPublicKey else {
            throw KeycardError.invalidResponse(.exportKey, "no public key for the master key")
        }
        masterFingerprint = master.fingerprint
    }

    public func owns(publicKey: [UInt8], origin: KeyOrigin?) -> Bool { origin != nil && origin?.fingerprint == masterFingerprint }

    private func keyPath(_ origin: KeyOrigin?) throws -> KeyPath? {
        guard let origin, origin.fingerprint == masterFingerprint else { return nil }
        return try KeyPath(source: .master, components: origin.path.indexes)
    }

    private func mismatch(_ shown: [UInt8], _ origin: KeyOrigin?) -> PSBTError {
        PSBTError(.signing, "the PSBT says key \(Hex.encode(shown)) is \(origin.map { "\($0)" } ?? "?"), but the card holds another key there; the PSBT was made for another wallet (or the card holds another seed)")
    }

    public func signECDSA(digest: [UInt8], publicKey: [UInt8], origin: KeyOrigin?) throws -> ECDSASignature? {
        guard let path = try keyPath(origin) else { return nil }
        signCount += 1
        let answer = try card.sign(digest: digest, mode: .derive(path))
        guard answer.publicKey.matches(publicKey) else { throw mismatch(publicKey, origin) }
        guard answer.isValid else { throw KeycardError.invalidResponse(.sign, "the card's signature does not verify against its public key") }
        return answer.signature.signature.normalized()
    }

    public func signSchnorr(digest: [UInt8], internalKey: XOnlyPublicKey, origin: KeyOrigin?, merkleRoot: [UInt8]?) throws -> [UInt8]? {
        guard let path = try keyPath(origin) else { return nil }
        // The applet adds the tweak to the (even-y) key as given; it does not compute BIP341's TapTweak itself.
        let tweak = try internalKey.taprootTweak(merkleRoot: merkleRoot)
        signCount += 1
        let answer = try card.signSchnorr(digest: digest, path: path, tweak: tweak)
        guard answer.publicKey.xOnly == internalKey else { throw mismatch(internalKey.bytes, origin) }
        let outputKey = try internalKey.taprootOutputKey(merkleRoot: merkleRoot)
        guard outputKey.verify(schnorr: answer.signature, message: digest) else {
            throw KeycardError.invalidResponse(.sign, "the card's Schnorr signature does not verify against the taproot output key")
        }
        return answer.signature
    }
}
