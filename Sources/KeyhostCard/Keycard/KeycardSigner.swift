import KeyhostCrypto

/// A Keycard as a `CardSigner`: EXPORT KEY and SIGN with paths from the master, over an open, PIN-verified
/// secure channel. It adds no state to the command set, so Lua's session methods and this signer can interleave.
public final class KeycardSigner: CardSigner {
    public let card: KeycardCommandSet

    public init(card: KeycardCommandSet) { self.card = card }

    public var profile: CardSignerProfile {
        var abilities: CardSignerProfile.Abilities = [.extendedKeys, .ecdsa]
        if card.version == .v2 { abilities.insert(.schnorr) }
        return CardSignerProfile(family: "Keycard", version: card.applicationInfo.map { "\($0.version)" } ?? "", abilities: abilities)
    }

    /// The command set's own refusals (made before anything is sent), so their wording stays the one
    /// `keyhost card export-key` and `card sign --schnorr` give.
    public func check(_ operation: CardSignerOperation, path: [UInt32]) throws {
        switch operation {
        case .extendedKey where path.isEmpty:
            _ = try card.exportKey(.extendedPublic, path: KeyPath(source: .master, components: path))
        case .signSchnorr where card.version != .v2:
            throw KeycardError.unsupportedForm(.sign, what: "Schnorr (BIP340) signing; it signs with ECDSA only", applet: card.appletName)
        default:
            return
        }
    }

    public func publicKey(at path: [UInt32]) throws -> PublicKey {
        let keyPath = try KeyPath(source: .master, components: path)
        guard let key = try card.exportKey(.publicOnly, path: keyPath).resolvedPublicKey else {
            throw KeycardError.invalidResponse(.exportKey, "no public key for \(keyPath)")
        }
        // The card writes keys uncompressed; BIP32 wallets use the compressed form.
        return key.compressed(true)
    }

    public func extendedKey(at path: [UInt32]) throws -> CardExtendedPublicKey {
        let keyPath = try KeyPath(source: .master, components: path)
        let exported = try card.exportKey(.extendedPublic, path: keyPath)
        guard let key = exported.resolvedPublicKey, let chainCode = exported.chainCode else {
            throw KeycardError.invalidResponse(.exportKey, "no extended public key for \(keyPath)")
        }
        return CardExtendedPublicKey(publicKey: key, chainCode: chainCode)
    }

    public func signECDSA(digest: [UInt8], at path: [UInt32]) throws -> CardECDSASignature {
        // KeycardSignature found the recovery id by recovering the key the card returned.
        let answer = try card.sign(digest: digest, mode: .derive(KeyPath(source: .master, components: path)))
        guard answer.isValid else { throw KeycardError.invalidResponse(.sign, "the signature does not verify against the card's public key") }
        return CardECDSASignature(signature: answer.signature, publicKey: answer.publicKey)
    }

    public func signSchnorr(digest: [UInt8], at path: [UInt32], taproot: TaprootSpend?) throws -> CardSchnorrSignature {
        try check(.signSchnorr, path: path)
        // The applet adds the tweak to the (even-y) key as given; it does not compute BIP341's TapTweak itself.
        let tweak = try taproot.map { try $0.internalKey.taprootTweak(merkleRoot: $0.merkleRoot) } ?? [UInt8](repeating: 0, count: 32)
        let answer = try card.signSchnorr(digest: digest, path: KeyPath(source: .master, components: path), tweak: tweak)
        let signer: XOnlyPublicKey
        if let taproot {
            guard answer.publicKey.xOnly == taproot.internalKey else {
                throw CardSignerError.wrongKey(profile, path: path, expected: taproot.internalKey.bytes, got: answer.publicKey.xOnly.bytes)
            }
            signer = try taproot.internalKey.taprootOutputKey(merkleRoot: taproot.merkleRoot)
        } else {
            signer = answer.publicKey.xOnly
        }
        guard signer.verify(schnorr: answer.signature, message: digest) else {
            throw KeycardError.invalidResponse(.sign, taproot == nil ? "the BIP340 signature does not verify under the public key the card returned"
                                                                     : "the card's Schnorr signature does not verify against the taproot output key")
        }
        return CardSchnorrSignature(signature: answer.signature, publicKey: answer.publicKey)
    }
}
