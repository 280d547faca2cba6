import KeyhostCrypto

/// A Satochip as a `CardSigner`: BIP32 GET EXTENDED KEY and SIGN TRANSACTION HASH with paths from the master, over
/// the secure channel with the PIN verified. Every derived key arrives signed by the card's authentikey, and every
/// signature is checked against the key derived for it.
public final class SatochipSigner: CardSigner {
    public let card: SatochipCommandSet

    public init(card: SatochipCommandSet) { self.card = card }

    public var profile: CardSignerProfile {
        // The public applet signs with ECDSA only; its master chain code comes out as any other (depth 0).
        CardSignerProfile(family: "Satochip", version: card.status?.version ?? "", abilities: [.extendedKeys, .masterExtendedKey, .ecdsa])
    }

    /// Refuses paths deeper than the applet derives and Schnorr signatures, before anything is sent.
    public func check(_ operation: CardSignerOperation, path: [UInt32]) throws {
        if path.count > Satochip.maxDepth {
            throw CardSignerError(kind: "invalid_path", "a Satochip derives at most \(Satochip.maxDepth) levels below the master; "
                                  + "\(CardSignerError.pathText(path)) has \(path.count): use a shorter path")
        }
        if operation == .signSchnorr {
            throw CardSignerError.unsupported(profile, operation, instead: "it signs with ECDSA (segwit v0 and legacy inputs, Ethereum, "
                                              + "messages); sign taproot inputs with a Keycard 4.x or the mnemonic")
        }
    }

    public func publicKey(at path: [UInt32]) throws -> PublicKey {
        try check(.publicKey, path: path)
        return try card.extendedKey(at: DerivationPath(indexes: path)).publicKey.compressed(true)
    }

    public func extendedKey(at path: [UInt32]) throws -> CardExtendedPublicKey {
        try check(.extendedKey, path: path)
        let key = try card.extendedKey(at: DerivationPath(indexes: path))
        return CardExtendedPublicKey(publicKey: key.publicKey, chainCode: key.chainCode)
    }

    public func signECDSA(digest: [UInt8], at path: [UInt32]) throws -> CardECDSASignature {
        try check(.signECDSA, path: path)
        // The key is derived (and loaded) first, then SIGN uses it; the signature is checked against it there.
        let signature = try card.signHashRecoverable(digest, at: DerivationPath(indexes: path))
        return CardECDSASignature(signature: signature, publicKey: try signature.recoverPublicKey(digest: digest))
    }

    public func signSchnorr(digest: [UInt8], at path: [UInt32], taproot: TaprootSpend?) throws -> CardSchnorrSignature {
        try check(.signSchnorr, path: path)
        throw CardSignerError.unsupported(profile, .signSchnorr, instead: "it signs with ECDSA")
    }
}
