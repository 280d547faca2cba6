import KeyhostCrypto

/// A card that holds an HD key and signs with it: the one interface every command and Lua function that takes a
/// card uses (key, PSBT and Ethereum signing, discovery, card-bound token holders), whatever the card's family.
///
/// Each family does what it can and refuses the rest in `check` before anything is sent, saying what the card can
/// do instead. Every answer is checked here, not by the caller: a signature verifies against the key the card
/// says it used, and that key is the key at the path (a family whose answer carries no key recovers it).
public protocol CardSigner: AnyObject {
    /// The family and what its card can do.
    var profile: CardSignerProfile { get }
    /// Refuses `operation` at `path` (from the master) when this card cannot do it, before anything is sent.
    func check(_ operation: CardSignerOperation, path: [UInt32]) throws
    /// The compressed public key at `path`.
    func publicKey(at path: [UInt32]) throws -> PublicKey
    /// The public key and chain code at `path`.
    func extendedKey(at path: [UInt32]) throws -> CardExtendedPublicKey
    /// An ECDSA signature (low S, with its recovery id) over the 32-byte `digest` by the key at `path`.
    func signECDSA(digest: [UInt8], at path: [UInt32]) throws -> CardECDSASignature
    /// A BIP340 signature over `digest` by the key at `path`, or by its BIP341 output key with `taproot`; it
    /// verifies under that key, and with `taproot` the key at `path` is its internal key.
    func signSchnorr(digest: [UInt8], at path: [UInt32], taproot: TaprootSpend?) throws -> CardSchnorrSignature
}

/// An operation a signer may be asked for, so that `check` can refuse it before anything is sent.
public enum CardSignerOperation: Sendable, Equatable, CustomStringConvertible {
    case publicKey
    case extendedKey
    case signECDSA
    case signSchnorr

    public var description: String {
        switch self {
        case .publicKey: return "a public key"
        case .extendedKey: return "an extended public key"
        case .signECDSA: return "an ECDSA signature"
        case .signSchnorr: return "a BIP340 Schnorr signature"
        }
    }
}

/// A public key and its BIP32 chain code, as a card exports them.
public struct CardExtendedPublicKey: Sendable, Equatable {
    public let publicKey: PublicKey
    public let chainCode: [UInt8]

    public init(publicKey: PublicKey, chainCode: [UInt8]) {
        self.publicKey = publicKey.compressed(true)
        self.chainCode = chainCode
    }
}

/// An ECDSA signature and the key that made it.
public struct CardECDSASignature: Sendable, Equatable {
    public let signature: RecoverableSignature
    public let publicKey: PublicKey

    public init(signature: RecoverableSignature, publicKey: PublicKey) {
        self.signature = signature
        self.publicKey = publicKey.compressed(true)
    }
}

/// A BIP340 signature (64 bytes) and the untweaked key that made it.
public struct CardSchnorrSignature: Sendable, Equatable {
    public let signature: [UInt8]
    public let publicKey: PublicKey

    public init(signature: [UInt8], publicKey: PublicKey) {
        self.signature = signature
        self.publicKey = publicKey.compressed(true)
    }
}

/// A taproot key-path spend: the internal key the wallet expects at the path, and the script tree's merkle root.
public struct TaprootSpend: Sendable, Equatable {
    public let internalKey: XOnlyPublicKey
    public let merkleRoot: [UInt8]?

    public init(internalKey: XOnlyPublicKey, merkleRoot: [UInt8]?) {
        self.internalKey = internalKey
        self.merkleRoot = merkleRoot
    }
}
