import KeyhostCrypto

/// The protocol's CVC proof: ECDH between an ephemeral key and the card key, hashed as libsecp256k1 does
/// (SHA-256 of the compressed shared point, so the Y parity counts), and the CVC XORed with
/// session key ⊕ SHA-256(card_nonce ‖ command name).
public enum CKTapAuth {
    /// SHA-256 of the compressed point `privateKey`·`publicKey`: both ends compute the same session key.
    public static func sessionKey(privateKey: PrivateKey, publicKey: PublicKey) throws -> SecretBytes {
        var scalar = privateKey.revealedBytes()
        defer { zero(&scalar) }
        var point = try publicKey.multiplied(by: scalar).compressed
        defer { zero(&point) }
        return SecretBytes(Hash.sha256(point))
    }

    /// The CVC masked for `command` under `sessionKey` and the card nonce; masking twice unmasks.
    public static func maskCVC(_ cvc: [UInt8], sessionKey: SecretBytes, cardNonce: [UInt8], command: String) -> [UInt8] {
        let md = Hash.sha256(cardNonce + Array(command.utf8))
        var key = sessionKey.revealedBytes()
        defer { zero(&key) }
        return cvc.enumerated().map { i, byte in byte ^ key[i % 32] ^ md[i % 32] }
    }

    /// XOR of `data` with the leading bytes of `sessionKey` (digests, keys and new CVCs travel this way).
    public static func xor(_ data: [UInt8], sessionKey: SecretBytes) -> [UInt8] {
        var key = sessionKey.revealedBytes()
        defer { zero(&key) }
        return data.enumerated().map { i, byte in byte ^ key[i % 32] }
    }

    /// One command's proof: a fresh ephemeral key from `random`, its public key, and the masked CVC.
    struct Proof {
        let sessionKey: SecretBytes
        let ephemeralPublicKey: [UInt8]
        let maskedCVC: [UInt8]
    }

    static func prove(cvc: SecretBytes, command: String, cardPublicKey: PublicKey, cardNonce: [UInt8], random: RandomSource) throws -> Proof {
        let ephemeral = random.privateKey()
        let key = try sessionKey(privateKey: ephemeral, publicKey: cardPublicKey)
        var plain = cvc.revealedBytes()
        defer { zero(&plain) }
        return Proof(sessionKey: key, ephemeralPublicKey: ephemeral.publicKey.compressed,
                     maskedCVC: maskCVC(plain, sessionKey: key, cardNonce: cardNonce, command: command))
    }
}
