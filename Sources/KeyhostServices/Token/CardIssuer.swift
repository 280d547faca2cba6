import KeyhostCard
import KeyhostCrypto
import KeyhostTokens

/// An issuer key on a card that signs BIP340 Schnorr (a Keycard 4.x): issuing a token with it, the same for
/// `keyhost token issue --issuer-card` and Lua's `token.issue{issuer_card = …}`. The card must be ready to sign.
public struct CardIssuer {
    public let signer: CardSigner
    public let path: KeyPath
    /// The issuer's x-only key, exported from the card at `path`.
    public let key: XOnlyPublicKey

    /// The card's key at `text` (an absolute path, e.g. `m/7419'/0'/0'`).
    public init(signer: CardSigner, path text: String) throws {
        let path = try CardHolder.path(text, role: "issuer key")
        try signer.check(.signSchnorr, path: path.components)
        self.signer = signer
        self.path = path
        key = try CardHolder.publicKey(signer, at: path).xOnly
    }

    /// A Keycard's issuer key (the session open, the PIN verified).
    public init(card: KeycardCommandSet, path text: String) throws {
        try self.init(signer: KeycardSigner(card: card), path: text)
    }

    /// Signs `token` (whose issuer must be `key`) on the card and checks the signature before handing it out.
    public func issue(_ token: Token) throws -> SignedToken {
        try token.validate()
        guard token.issuer == key else {
            throw CardServiceError(kind: "invalid", "the token names issuer \(Hex.encode(token.issuer.bytes)), not the card's key at \(path)")
        }
        let signature = try signer.signSchnorr(digest: SignedToken.digest(of: token), at: path.components, taproot: nil)
        let signed = SignedToken(token: token, signature: signature.signature)
        guard signed.signatureIsValid else {
            throw CardServiceError(kind: "signing", "the card's Schnorr signature does not verify with its key at \(path)")
        }
        return signed
    }
}
