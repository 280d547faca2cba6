import KeyhostCrypto
import KeyhostTokens

/// Whose key the wallet's tokens are issued to: a key kept in the wallet file, or one that lives
/// on a Keycard (named by the card's key UID and a derivation path; the card signs receipts).
public enum WalletHolder: Equatable, Sendable {
    case software(PublicKey)
    case card(publicKey: PublicKey, keyUID: [UInt8], path: String)

    public var publicKey: PublicKey {
        switch self {
        case .software(let key), .card(let key, _, _): return key
        }
    }

    /// "software" or "card".
    public var kind: String {
        if case .card = self { return "card" }
        return "software"
    }
}

/// Signs receipts with the holder's key: ECDSA over a 32-byte digest, 64 bytes r ‖ s with low S.
public protocol ReceiptSigner {
    var publicKey: PublicKey { get }
    func sign(digest: [UInt8]) throws -> [UInt8]
}

/// The holder key kept in the wallet file.
public struct SoftwareReceiptSigner: ReceiptSigner, Sendable {
    let key: PrivateKey
    public init(key: PrivateKey) { self.key = key }
    public var publicKey: PublicKey { key.publicKey }
    public func sign(digest: [UInt8]) throws -> [UInt8] { try key.sign(digest: digest).normalized().compact }
}
