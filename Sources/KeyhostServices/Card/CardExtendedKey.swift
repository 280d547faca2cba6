import KeyhostCard
import KeyhostCrypto

/// Extended public keys from a card's EXPORT KEY answers (`s:export_key{kind = "extended"}`, `keyhost card export-key --xpub`).
public enum CardExtendedKey {
    /// BIP32 serialization of an exported extended public key. The parent fingerprint needs the parent's
    /// public key, exported from the card as well (one more EXPORT KEY).
    public static func serialize(_ card: KeycardCommandSet, path: KeyPath, key: PublicKey, chainCode: [UInt8],
                                 family: ExtendedKeyVersion) throws -> String {
        var parentFingerprint: UInt32 = 0
        var childNumber: UInt32 = 0
        if let last = path.components.last {
            childNumber = last
            let parent = try KeyPath(source: .master, components: Array(path.components.dropLast()))
            guard let parentKey = try card.exportKey(.publicOnly, path: parent).resolvedPublicKey else {
                throw KeycardError.invalidResponse(.exportKey, "no public key for the parent of \(path)")
            }
            parentFingerprint = Hash.hash160(parentKey.compressed).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
        }
        var data = bigEndian(family.publicVersion)
        data.append(UInt8(path.components.count))
        data += bigEndian(parentFingerprint)
        data += bigEndian(childNumber)
        data += chainCode
        data += key.compressed
        return Base58.encodeCheck(data)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
