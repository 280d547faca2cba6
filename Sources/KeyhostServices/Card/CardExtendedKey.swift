import KeyhostCard
import KeyhostCrypto

/// Extended public keys from a card signer: `s:export_key{kind = "extended"}`, `keyhost card export-key --extended`,
/// `key xpub --card` and discovery's account keys all build them here, for any card family.
public enum CardExtendedKey {
    /// The public node at `components`. Its parent fingerprint needs the parent's public key: `parentKey` gives it
    /// (one more export, or a cached one), or nil to leave the fingerprint 0 where nothing reads it (addresses below
    /// the node do not depend on it).
    public static func node(_ signer: CardSigner, components: [UInt32],
                            parentKey: (([UInt32]) throws -> PublicKey)? = nil) throws -> HDNode {
        try signer.check(.extendedKey, path: components)
        let exported = try signer.extendedKey(at: components)
        let parent = components.isEmpty ? nil : try parentKey?(Array(components.dropLast()))
        return try node(signer, components: components, key: exported.publicKey, chainCode: exported.chainCode, parent: parent)
    }

    /// The node from an export's parts and the parent's key (nil: fingerprint 0).
    private static func node(_ signer: CardSigner, components: [UInt32], key: PublicKey, chainCode: [UInt8], parent: PublicKey?) throws -> HDNode {
        guard let node = HDNode(publicKey: key.compressed(true), chainCode: chainCode, depth: components.count,
                                parentFingerprint: parent?.fingerprint ?? 0, childNumber: components.last ?? 0) else {
            throw CardSignerError.invalidResponse(signer.profile, "the extended public key for \(CardSignerError.pathText(components)) "
                                                  + "breaks BIP32 (chain code of \(chainCode.count) bytes)")
        }
        return node
    }

    /// The parent's public key by one export (public only).
    public static func exportedKey(_ signer: CardSigner, components: [UInt32]) throws -> PublicKey {
        try signer.check(.publicKey, path: components)
        return try signer.publicKey(at: components)
    }

    /// BIP32 serialization of the extended public key `key`/`chainCode` the card exported at `components`, its
    /// parent's fingerprint from one more export.
    public static func serialize(_ signer: CardSigner, components: [UInt32], key: PublicKey, chainCode: [UInt8],
                                 family: ExtendedKeyVersion) throws -> String {
        let parent = components.isEmpty ? nil : try exportedKey(signer, components: Array(components.dropLast()))
        return try node(signer, components: components, key: key, chainCode: chainCode, parent: parent).extendedPublicKey(family)
    }
}
