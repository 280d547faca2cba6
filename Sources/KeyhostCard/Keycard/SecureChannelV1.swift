import KeyhostCrypto

/// Secure channel v1 (applet 3.x), client side.
///
/// Keys: K = SHA-512(ECDH x ‖ pairing key ‖ salt), encryption key K[0..32], MAC key K[32..64].
/// Command data = MAC ‖ AES-256-CBC(encKey, IV, M2-pad(plaintext)), MAC = CBC-MAC(macKey, CLA INS P1 P2 Lc′ ‖ 0¹¹ ‖ ciphertext);
/// response data = MAC ‖ ciphertext with MAC over (length ‖ 0¹⁵ ‖ ciphertext). Every MAC becomes the next IV.
public final class SecureChannelV1: KeycardSecureChannel {
    public let version = SecureChannelVersion.v1
    public private(set) var isOpen = true
    private var encKey: [UInt8]
    private var macKey: [UInt8]
    private var iv: [UInt8]
    private var previousIV: [UInt8]?

    /// Largest plaintext a short APDU carries once wrapped.
    public static let maxPlaintext = 223

    init(encKey: [UInt8], macKey: [UInt8], iv: [UInt8]) {
        self.encKey = encKey; self.macKey = macKey; self.iv = iv
    }

    deinit { close() }

    /// Session keys from the OPEN SECURE CHANNEL exchange.
    static func derive(sharedSecret: SecretBytes, pairingKey: SecretBytes, salt: [UInt8], iv: [UInt8]) -> SecureChannelV1 {
        var input = sharedSecret.revealedBytes() + pairingKey.revealedBytes() + salt
        defer { wipe(&input) }
        let k = Hash.sha512(input)
        return SecureChannelV1(encKey: Array(k[0..<32]), macKey: Array(k[32..<64]), iv: iv)
    }

    public func wrap(_ apdu: CommandAPDU) throws -> CommandAPDU {
        guard isOpen else { throw KeycardError.secureChannelNotOpen(KeycardInstruction(rawValue: apdu.ins)) }
        guard apdu.data.count <= SecureChannelV1.maxPlaintext else {
            throw KeycardError.invalidArgument("\(KeycardInstruction(rawValue: apdu.ins)) data of \(apdu.data.count) bytes exceeds the secure channel v1 limit of \(SecureChannelV1.maxPlaintext)")
        }
        // The padded copy holds the command's secrets (PIN, PUK, keys) in clear.
        var padded = ISO9797M2.pad(apdu.data)
        defer { wipe(&padded) }
        let ciphertext = try AES256CBC.encrypt(padded, key: encKey, iv: iv)
        let lc = UInt8(ciphertext.count + 16)
        let mac = try CBCMAC.mac(key: macKey, data: [apdu.cla, apdu.ins, apdu.p1, apdu.p2, lc] + [UInt8](repeating: 0, count: 11) + ciphertext)
        previousIV = iv
        iv = mac
        return CommandAPDU(cla: apdu.cla, ins: apdu.ins, p1: apdu.p1, p2: apdu.p2, data: mac + ciphertext)
    }

    public func unwrap(_ response: ResponseAPDU, for command: CommandAPDU) throws -> ResponseAPDU {
        guard response.statusWord == .success else {
            close()
            return response
        }
        let ins = KeycardInstruction(rawValue: command.ins)
        guard response.data.count >= 32, response.data.count % 16 == 0 else {
            close()
            throw KeycardError.invalidResponse(ins, "secure response of \(response.data.count) bytes")
        }
        let mac = Array(response.data[0..<16])
        let ciphertext = Array(response.data[16...])
        // The card MACs only the low byte of the length.
        let expected = try CBCMAC.mac(key: macKey, data: [UInt8(truncatingIfNeeded: response.data.count)] + [UInt8](repeating: 0, count: 15) + ciphertext)
        guard expected == mac else {
            close()
            throw KeycardError.invalidResponse(ins, "response MAC does not verify")
        }
        var plaintext: [UInt8]
        do {
            plaintext = try ISO9797M2.unpad(AES256CBC.decrypt(ciphertext, key: encKey, iv: iv))
        } catch {
            // The 3.x applet rejects an unknown INS or bad P1 before it takes the command MAC as IV,
            // so such an error answer is encrypted under the previous IV.
            guard let previousIV, ciphertext.count == 16,
                  let stale = try? ISO9797M2.unpad(AES256CBC.decrypt(ciphertext, key: encKey, iv: previousIV)), stale.count == 2 else {
                close()
                throw KeycardError.invalidResponse(ins, "secure response does not decrypt")
            }
            plaintext = stale
        }
        iv = mac
        guard plaintext.count >= 2 else {
            close()
            throw KeycardError.invalidResponse(ins, "secure response without a status word")
        }
        return try ResponseAPDU(bytes: plaintext)
    }

    public func close() {
        isOpen = false
        wipe(&encKey)
        wipe(&macKey)
    }
}
