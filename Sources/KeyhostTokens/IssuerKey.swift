import KeyhostCrypto

/// Where an issuer's signing key comes from when it is given as a mnemonic.
public enum IssuerKey {
    /// A path of its own, so an issuer key is never also a wallet's receiving key.
    public static let mnemonicPath = "m/7419'/0'/0'"

    /// The key from a 32-byte private key in hex, or from a BIP39 mnemonic at `mnemonicPath`.
    /// Errors never contain the secret.
    public static func from(secret text: String) throws -> PrivateKey {
        let trimmed = text.trimmingWhitespace
        if trimmed.utf8.count == 64, trimmed.utf8.allSatisfy({ isHexDigit($0) }) {
            guard let key = try? PrivateKey(bytes: Hex.decode(trimmed)) else {
                throw TokenError("key", "the issuer key is 64 hex digits but not a valid secp256k1 private key")
            }
            return key
        }
        guard trimmed.contains(" ") else {
            throw TokenError("key", "the issuer key must be a 32-byte private key in hex (64 digits) or a BIP39 mnemonic")
        }
        do {
            let seed = try Mnemonic(phrase: trimmed).seed()
            guard let key = try HDNode(seed: seed).derive(mnemonicPath).privateKey else {
                throw TokenError("key", "the mnemonic gave no private key")
            }
            return key
        } catch let error as TokenError {
            throw error
        } catch {
            throw TokenError("key", "the issuer mnemonic is not valid: \(error)")
        }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x61...0x66).contains(c) || (0x41...0x46).contains(c)
    }
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }
}
