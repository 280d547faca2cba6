import KeyhostCard
import KeyhostCrypto

/// Extended public keys from a card's EXPORT KEY answers: `s:export_key{kind = "extended"}`, `keyhost card
/// export-key --extended`, `key xpub --card` and discovery's account keys all build them here.
public enum CardExtendedKey {
    /// The public node at `components` from EXPORT KEY (extended public). Its parent fingerprint needs the
    /// parent's public key: `parentKey` gives it (one more EXPORT KEY, or a cached one), or nil to leave the
    /// fingerprint 0 where nothing reads it (addresses below the node do not depend on it).
    public static func node(_ card: KeycardCommandSet, components: [UInt32],
                            parentKey: (([UInt32]) throws -> PublicKey)? = nil) throws -> HDNode {
        let path = try KeyPath(source: .master, components: components)
        let exported = try card.exportKey(.extendedPublic, path: path)
        guard let key = exported.resolvedPublicKey, let chainCode = exported.chainCode else {
            throw KeycardError.invalidResponse(.exportKey, "no extended public key for \(path)")
        }
        let parent = components.isEmpty ? nil : try parentKey?(Array(components.dropLast()))
        return try node(path: path, key: key, chainCode: chainCode, parent: parent)
    }

    /// The node from an EXPORT KEY answer's parts and the parent's key (nil: fingerprint 0).
    private static func node(path: KeyPath, key: PublicKey, chainCode: [UInt8], parent: PublicKey?) throws -> HDNode {
        guard let node = HDNode(publicKey: key.compressed(true), chainCode: chainCode, depth: path.components.count,
                                parentFingerprint: parent?.fingerprint ?? 0, childNumber: path.components.last ?? 0) else {
            throw KeycardError.invalidResponse(.exportKey, "the extended public key for \(path) breaks BIP32 (chain code of \(chainCode.count) bytes)")
        }
        return node
    }

    /// The parent's public key by one EXPORT KEY (public only).
    public static func exportedKey(_ card: KeycardCommandSet, components: [UInt32]) throws -> PublicKey {
        let path = try KeyPath(source: .master, components: components)
        guard let key = try card.exportKey(.publicOnly, path: path).resolvedPublicKey else {
            throw KeycardError.invalidResponse(.exportKey, "no public key for \(path)")
        }
        return key
    }

    /// BIP32 serialization of the extended public key `key`/`chainCode` the card exported at `path`, its parent's
    /// fingerprint from one more EXPORT KEY.
    public static func serialize(_ card: KeycardCommandSet, path: KeyPath, key: PublicKey, chainCode: [UInt8],
                                 family: ExtendedKeyVersion) throws -> String {
        let parent = path.components.isEmpty ? nil : try exportedKey(card, components: Array(path.components.dropLast()))
        return try node(path: path, key: key, chainCode: chainCode, parent: parent).extendedPublicKey(family)
    }
}
