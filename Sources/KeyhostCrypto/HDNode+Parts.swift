/// Extended public keys put together from parts, as a Keycard exports them (key, chain code, path), and the
/// fingerprints that tie a key to its parent: one definition for every card path (CLI, Lua, discovery).
extension HDNode {
    /// A public node from BIP32's fields; nil when they break BIP32's rules (a chain code that is not 32 bytes,
    /// a depth beyond 255, a master with a parent or an index).
    public init?(publicKey: PublicKey, chainCode: [UInt8], depth: Int, parentFingerprint: UInt32, childNumber: UInt32) {
        guard chainCode.count == 32, let depth = UInt8(exactly: depth),
              depth > 0 || (parentFingerprint == 0 && childNumber == 0) else { return nil }
        self.init(depth: depth, parentFingerprint: parentFingerprint, childNumber: childNumber, chainCode: chainCode,
                  privateKey: nil, publicKey: publicKey)
    }
}

extension PublicKey {
    /// BIP32's fingerprint: the first 4 bytes of HASH160 of the compressed key, as children record their parent.
    public var fingerprint: UInt32 { Hash.hash160(compressed).prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }
}

/// Eight lowercase hex digits, as key origins, descriptors and PSBTs write a fingerprint.
public func fingerprintHex(_ value: UInt32) -> String {
    Hex.encode([UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
}
