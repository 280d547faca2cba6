import KeyhostCard
import KeyhostCrypto
import KeyhostTokens
import KeyhostWallet

/// A token wallet whose holder key lives on a card (any family that signs ECDSA at paths): binding the wallet to the card's key at a path,
/// and signing receipts on the card. Shared by `keyhost.token` and `keyhost token wallet init --card` /
/// `keyhost token run`. The session must be open with the PIN verified. Errors are `CardServiceError`s of the
/// token kinds (`invalid`, `wrong_card`, `wrong_key`), which Lua and `--json` report as they did `keyhost.token`'s own.
public enum CardHolder {
    /// The card's key UID: SHA-256 of its master public key (uncompressed), as the Keycard applet computes it
    /// for SELECT, and the same for every family. Computed from an export of the master key rather than read from a
    /// SELECT answer, which goes stale when a key is loaded after SELECT.
    public static func keyUID(_ signer: CardSigner) throws -> [UInt8] {
        Hash.sha256(try CardExtendedKey.exportedKey(signer, components: []).uncompressed)
    }

    /// An absolute path (`m/…`) in its canonical form; `role` names the key in errors ("holder key", "issuer key").
    public static func path(_ text: String, role: String = "holder key") throws -> KeyPath {
        let path: KeyPath
        do { path = try KeyPath(text) } catch {
            throw CardServiceError(kind: "invalid", "the \(role) path \(text.prefix(80).debugDescription) is not a derivation path: \(error)")
        }
        guard path.source == .master else {
            throw CardServiceError(kind: "invalid", "the \(role) path must be absolute (m/…), got \(text.prefix(80).debugDescription)")
        }
        return path
    }

    /// The public key at `path`, exported from the card.
    public static func publicKey(_ signer: CardSigner, at path: KeyPath) throws -> PublicKey {
        try CardExtendedKey.exportedKey(signer, components: path.components)
    }

    /// What `TokenWallet.create(path:card:)` stores: the public key at `path`, the card's key UID and the path.
    public static func binding(_ signer: CardSigner, path text: String) throws -> (publicKey: PublicKey, keyUID: [UInt8], path: String) {
        let path = try path(text)
        try signer.check(.signECDSA, path: path.components)
        return (try publicKey(signer, at: path), try keyUID(signer), path.description)
    }

    /// A signer for a card-bound wallet's receipts, after checking that this card holds the wallet's key:
    /// same key UID (`wrong_card`), and the key at the stored path is the holder key (`wrong_key`).
    public static func signer(_ signer: CardSigner, holder: WalletHolder) throws -> CardReceiptSigner {
        guard case .card(let holderKey, let wantedUID, let pathText) = holder else {
            throw CardServiceError(kind: "invalid", "this wallet's holder key is kept in the wallet file, not on a card")
        }
        let path = try path(pathText)
        let uid = try keyUID(signer)
        guard uid == wantedUID else {
            throw CardServiceError(kind: "wrong_card",
                "this card holds key \(Hex.encode(uid.prefix(8)))…, but the wallet is bound to key \(Hex.encode(wantedUID.prefix(8)))…: insert the wallet's card (nothing was run)")
        }
        let key = try publicKey(signer, at: path)
        guard key == holderKey else {
            throw CardServiceError(kind: "wrong_key",
                "the card's key at \(path) is \(Hex.encode(key.compressed)), not the wallet's holder key \(Hex.encode(holderKey.compressed)) (nothing was run)")
        }
        return CardReceiptSigner(signer: signer, path: path, publicKey: holderKey)
    }
}

/// Signs receipts on the card: a signature by the holder key's path (derived for this signature only), the
/// card's answer converted to 64 bytes r ‖ s with low S.
public struct CardReceiptSigner: ReceiptSigner {
    let signer: CardSigner
    let path: KeyPath
    public let publicKey: PublicKey

    public func sign(digest: [UInt8]) throws -> [UInt8] {
        let signed = try signer.signECDSA(digest: digest, at: path.components)
        guard signed.publicKey == publicKey else {
            throw CardServiceError(kind: "wrong_key", "the card signed with \(Hex.encode(signed.publicKey.compressed)), not the holder key")
        }
        return signed.signature.signature.normalized().compact
    }
}
