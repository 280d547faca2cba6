import KeyhostCrypto

/// What signs for a PSBT: software keys, an HD master, a smart card.
///
/// The signer asks the source about each key a PSBT names (with its BIP32 origin when the PSBT gives
/// one). A source answers nil for keys that are not its own, and throws when the origin claims to be
/// its own but the key there is another (a wrong fingerprint, path or account): signing that would
/// produce a signature nobody can use, and usually means the PSBT was made for another wallet.
public protocol PSBTKeySource: AnyObject {
    /// The master fingerprint this source signs for, when it has one (HD master, card); inspect shows it.
    var masterFingerprint: UInt32? { get }
    /// Whether BIP340 Schnorr signatures are possible (Keycard 3.x has ECDSA only).
    var supportsSchnorr: Bool { get }
    /// Whether this source would sign for the key, judged without deriving it (a fingerprint match, or a known key).
    func owns(publicKey: [UInt8], origin: KeyOrigin?) -> Bool
    /// An ECDSA signature (low-S) of `digest` by the private key of `publicKey` (33 or 65 bytes, as the PSBT
    /// lists it), or nil if the key is not this source's. Bytes rather than a parsed key: parsing a
    /// compressed key costs a square root, a quarter of a signature, and matching needs only the bytes.
    func signECDSA(digest: [UInt8], publicKey: [UInt8], origin: KeyOrigin?) throws -> ECDSASignature?
    /// A BIP340 signature of `digest` by the taproot output key for `internalKey` (the internal key's
    /// private key, made even, plus TapTweak(internalKey ‖ merkleRoot)), or nil if the key is not this source's.
    func signSchnorr(digest: [UInt8], internalKey: XOnlyPublicKey, origin: KeyOrigin?, merkleRoot: [UInt8]?) throws -> [UInt8]?
}

/// Signs with keys derived from a BIP32 master (from a mnemonic or an xprv).
///
/// Derived nodes are cached by path, so inputs on sibling paths (m/84'/0'/0'/0/i) derive only their last step.
public final class HDKeySource: PSBTKeySource {
    private let master: HDNode
    private var cache = [DerivationPath: HDNode]()
    public let masterFingerprint: UInt32?
    public var supportsSchnorr: Bool { true }
    /// Fixed BIP340 auxiliary randomness for reproducible tests; nil (fresh randomness) otherwise.
    public var auxiliaryRandom: [UInt8]?
    /// ECDSA ground to a low R, as Core and embit sign (default); off only to reproduce BIP174's vectors,
    /// which were made with plain RFC 6979.
    public var lowR = true

    public init(master: HDNode) throws {
        guard master.isPrivate else { throw PSBTError(.signing, "the HD key has no private key (an xpub cannot sign); pass an xprv or a mnemonic") }
        guard master.depth == 0 else {
            throw PSBTError(.signing, "the HD key is at depth \(master.depth), not a master key; PSBT key origins start at the master, so pass the master key")
        }
        self.master = master
        masterFingerprint = master.fingerprint
    }

    public func owns(publicKey: [UInt8], origin: KeyOrigin?) -> Bool { origin?.fingerprint == masterFingerprint }

    /// The node at `path`, derived from the deepest cached ancestor.
    func node(at path: DerivationPath) throws -> HDNode {
        if let node = cache[path] { return node }
        var node = master
        var depth = path.indexes.count
        while depth > 0 {
            if let cached = cache[DerivationPath(prefixOf: path, depth: depth)] { node = cached; break }
            depth -= 1
        }
        for d in depth..<path.indexes.count {
            node = try node.derive(child: path.indexes[d])
            // Cache ancestors only: the leaf keys of a large PSBT are each used once.
            if d + 1 < path.indexes.count { cache[DerivationPath(prefixOf: path, depth: d + 1)] = node }
        }
        return node
    }

    private func key(for origin: KeyOrigin?, matching check: (HDNode) -> Bool, shown: String) throws -> PrivateKey? {
        guard let origin, origin.fingerprint == masterFingerprint else { return nil }
        let node = try node(at: origin.path)
        guard check(node), let key = node.privateKey else {
            throw PSBTError(.signing, "the PSBT says key \(shown) is \(origin), but this master key derives another key there; the PSBT was made for another wallet (or the wrong account/path)")
        }
        return key
    }

    public func signECDSA(digest: [UInt8], publicKey: [UInt8], origin: KeyOrigin?) throws -> ECDSASignature? {
        guard let key = try key(for: origin, matching: { $0.publicKey.matches(publicKey) }, shown: Hex.encode(publicKey)) else { return nil }
        return try lowR ? key.signLowR(digest: digest) : key.sign(digest: digest)
    }

    public func signSchnorr(digest: [UInt8], internalKey: XOnlyPublicKey, origin: KeyOrigin?, merkleRoot: [UInt8]?) throws -> [UInt8]? {
        guard let key = try key(for: origin, matching: { $0.publicKey.xOnly == internalKey }, shown: Hex.encode(internalKey.bytes)) else { return nil }
        return try SoftwareTaproot.sign(key, digest: digest, merkleRoot: merkleRoot, auxiliaryRandom: auxiliaryRandom)
    }
}

/// Signs with a fixed set of private keys, matched by public key whatever origin the PSBT gives
/// (BIP174's test signers hold WIF keys; a benchmark holds pre-derived keys).
public final class PrivateKeySet: PSBTKeySource {
    private var byCompressed = [[UInt8]: PrivateKey]()
    private var byUncompressed = [[UInt8]: PrivateKey]()
    private var byXOnly = [[UInt8]: PrivateKey]()
    public var masterFingerprint: UInt32? { nil }
    public var supportsSchnorr: Bool { true }
    public var auxiliaryRandom: [UInt8]?
    /// ECDSA ground to a low R, as Core and embit sign (default); off only to reproduce BIP174's vectors,
    /// which were made with plain RFC 6979.
    public var lowR = true

    public init(_ keys: [PrivateKey]) {
        for key in keys {
            let pub = key.publicKey
            byCompressed[pub.compressed] = key
            byUncompressed[pub.uncompressed] = key
            byXOnly[pub.xOnly.bytes] = key
        }
    }

    private func lookup(_ serialized: [UInt8]) -> PrivateKey? {
        serialized.count == 65 ? byUncompressed[serialized] : serialized.count == 32 ? byXOnly[serialized] : byCompressed[serialized]
    }

    public func owns(publicKey: [UInt8], origin: KeyOrigin?) -> Bool { lookup(publicKey) != nil }

    public func signECDSA(digest: [UInt8], publicKey: [UInt8], origin: KeyOrigin?) throws -> ECDSASignature? {
        guard publicKey.count != 32 else { return nil }
        guard let key = lookup(publicKey) else { return nil }
        return try lowR ? key.signLowR(digest: digest) : key.sign(digest: digest)
    }

    public func signSchnorr(digest: [UInt8], internalKey: XOnlyPublicKey, origin: KeyOrigin?, merkleRoot: [UInt8]?) throws -> [UInt8]? {
        guard let key = lookup(internalKey.bytes) else { return nil }
        return try SoftwareTaproot.sign(key, digest: digest, merkleRoot: merkleRoot, auxiliaryRandom: auxiliaryRandom)
    }
}

enum SoftwareTaproot {
    /// BIP341 key-path signing: the key made even-y plus TapTweak(internal key ‖ merkle root) signs.
    static func sign(_ key: PrivateKey, digest: [UInt8], merkleRoot: [UInt8]?, auxiliaryRandom: [UInt8]?) throws -> [UInt8] {
        try key.taprootTweaked(merkleRoot: merkleRoot).signSchnorr(message: digest, auxiliaryRandom: auxiliaryRandom)
    }
}

extension PublicKey {
    /// Whether `bytes` (33 compressed or 65 uncompressed) serialize this key.
    public func matches(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 33: return compressed == bytes
        case 65: return uncompressed == bytes
        default: return false
        }
    }
}

extension DerivationPath {
    /// The first `depth` steps of `path` (always valid: a prefix of a valid path).
    init(prefixOf path: DerivationPath, depth: Int) {
        self = (try? DerivationPath(indexes: Array(path.indexes.prefix(depth)), absolute: path.isAbsolute)) ?? .master
    }
}

