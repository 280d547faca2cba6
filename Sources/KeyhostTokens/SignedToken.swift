import KeyhostCrypto

/// A token with its issuer's BIP340 signature: the unit that is armoured, imported and run.
public struct SignedToken: Equatable, Sendable {
    /// Domain separation: a token signature can never be mistaken for any other BIP340 signature.
    public static let signatureTag = "keyhost/token/v1"

    public let token: Token
    /// 64-byte BIP340 signature over `signedDigest`.
    public let signature: [UInt8]

    /// The 32 bytes the issuer signs: a tagged hash of the token's canonical encoding.
    public static func digest(of token: Token) -> [UInt8] { Hash.tagged(signatureTag, token.encoded) }

    /// Signs `token` with the issuer's key; the token's issuer field must be that key.
    public static func issue(_ token: Token, issuerKey: PrivateKey) throws -> SignedToken {
        try token.validate()
        guard issuerKey.publicKey.xOnly == token.issuer else {
            throw TokenError.field("issuer", "is not the public key of the signing key")
        }
        return SignedToken(token: token, signature: try issuerKey.signSchnorr(message: digest(of: token)))
    }

    /// `{"token": <map>, "sig": <64 bytes>}`, deterministic; made once (a chain's hash, every
    /// link's predecessor and every run request hold it).
    public let encoded: [UInt8]

    public init(token: Token, signature: [UInt8]) {
        self.token = token
        self.signature = signature
        encoded = CBOREncoder.encode(.map([CBORPair(.text("token"), token.cbor), CBORPair(.text("sig"), .bytes(signature))]))
    }

    /// Whether the signature is the issuer's over this exact token.
    public var signatureIsValid: Bool {
        signature.count == 64 && token.issuer.verify(schnorr: signature, message: Self.digest(of: token))
    }

    /// Throws unless the signature is valid.
    public func verify() throws {
        guard signatureIsValid else {
            throw TokenError("signature", "the issuer's signature does not match this token (it was altered, or signed by another key)")
        }
    }


    /// Parses an encoded token strictly: size limit first, deterministic CBOR, known fields only.
    /// The signature is read, not checked: call `verify()` (inspecting a forged token must work).
    public init(encoded bytes: [UInt8]) throws {
        guard bytes.count <= TokenLimits.maxEncodedBytes else {
            throw TokenError("limit", "token of \(bytes.count) bytes is more than the limit of \(TokenLimits.maxEncodedBytes)")
        }
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes, limits: .init(maxBytes: TokenLimits.maxEncodedBytes, maxDepth: TokenLimits.maxDepth))
        } catch let error as CBORError {
            throw TokenError("encoding", "token encoding: \(error)")
        }
        guard case .map(let pairs) = value, pairs.count == 2, let tokenValue = value["token"], let sig = value["sig"] else {
            throw TokenError("encoding", "a signed token must be a map with exactly the fields 'token' and 'sig'")
        }
        guard case .bytes(let signature) = sig, signature.count == 64 else {
            throw TokenError.field("sig", "must be a 64-byte BIP340 signature")
        }
        self.init(token: try Token(cbor: tokenValue), signature: signature)
    }
}
