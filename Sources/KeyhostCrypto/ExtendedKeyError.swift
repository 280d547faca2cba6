/// A BIP32 seed, extended key or derivation step that cannot be used.
public enum ExtendedKeyError: Error, Equatable, CustomStringConvertible {
    /// BIP32 seeds are 16 to 64 bytes.
    case seedLength(Int)
    /// The seed gives an invalid master key (probability below 2^-127).
    case invalidMasterKey
    /// This child index gives an invalid key (probability below 2^-127); BIP32 says to skip to the next index.
    case invalidChild(index: UInt32)
    /// Hardened children need the private key.
    case hardenedFromPublic(index: UInt32)
    /// An absolute ("m/...") path applied to a key that is not a master key.
    case absolutePathFromNonRoot(path: String, depth: Int)
    /// Deriving past depth 255.
    case tooDeep
    /// The Base58Check layer failed (bad character, bad checksum).
    case encoding(EncodingError)
    /// The decoded key is not 78 bytes.
    case length(Int)
    /// The 4-byte version is not a known xpub/xprv family.
    case unknownVersion(UInt32)
    /// A public version with private key data, or a private version with public key data.
    case versionKeyMismatch(prefix: String, keyData: String)
    /// Key data starting with a byte that is neither 00 (private) nor 02/03 (public).
    case invalidKeyPrefix(UInt8)
    /// Depth 0 (master) but with a non-zero parent fingerprint.
    case zeroDepthWithParent(UInt32)
    /// Depth 0 (master) but with a non-zero child index.
    case zeroDepthWithIndex(UInt32)
    /// The private key in the data is 0 or not below n.
    case invalidPrivateKey
    /// The public key in the data is not a curve point.
    case invalidPublicKey
    /// An xprv was asked of a public-only key.
    case notPrivate

    public var description: String {
        switch self {
        case .seedLength(let n):
            return "invalid BIP32 seed: \(n) bytes; use 16 to 64 bytes (a BIP39 seed is 64)"
        case .invalidMasterKey:
            return "invalid BIP32 seed: it gives an invalid master key; use another seed"
        case .invalidChild(let index):
            return "BIP32 child \(DerivationPath.format(index)) is invalid (a 1 in 2^127 event); skip to the next index"
        case .hardenedFromPublic(let index):
            return "cannot derive hardened child \(DerivationPath.format(index)) from a public key; use the extended private key"
        case .absolutePathFromNonRoot(let path, let depth):
            return "absolute path \(path) applied to a key at depth \(depth); use a relative path such as 0/5, or start from the master key"
        case .tooDeep:
            return "cannot derive beyond BIP32's maximum depth of 255"
        case .encoding(let error):
            return "invalid extended key: \(error)"
        case .length(let n):
            return "invalid extended key: decodes to \(n) bytes; BIP32 keys are 78 bytes"
        case .unknownVersion(let version):
            return "invalid extended key: unknown version 0x\(Hex.encode(withUnsafeBytes(of: version.bigEndian) { Array($0) })); expected xpub/ypub/zpub/tpub/upub/vpub or their private forms"
        case .versionKeyMismatch(let prefix, let keyData):
            return "invalid extended key: \(prefix) version but the key data is a \(keyData) key"
        case .invalidKeyPrefix(let byte):
            return "invalid extended key: key data starts with 0x\(Hex.encode([byte])); expected 00 (private) or 02/03 (public)"
        case .zeroDepthWithParent(let fingerprint):
            return "invalid extended key: depth 0 (master) but parent fingerprint \(String(fingerprint, radix: 16)) is not zero"
        case .zeroDepthWithIndex(let index):
            return "invalid extended key: depth 0 (master) but child index \(index) is not zero"
        case .invalidPrivateKey:
            return "invalid extended key: the private key is 0 or not below the curve order"
        case .invalidPublicKey:
            return "invalid extended key: the public key is not a point on secp256k1"
        case .notPrivate:
            return "this is a public-only extended key; an extended private key needs the private key"
        }
    }
}
