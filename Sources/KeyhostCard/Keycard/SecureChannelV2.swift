import KeyhostCrypto

/// Secure channel v2 (applet 4.x), client side.
///
/// HKDF-SHA256(salt, ECDH x, "sc_v2_ccm") gives 32 bytes: host→card key [0..16], card→host key [16..32].
/// Each command goes as `80 18 00 00 Lc AES-128-CCM(h2c, nonce, CLA INS P1 P2 Lc data)`; the answer is
/// `AES-128-CCM(c2h, nonce, data ‖ SW)`. The 13-byte big-endian nonce counter starts at 0 and counts exchanges.
public final class SecureChannelV2: KeycardSecureChannel {
    public let version = SecureChannelVersion.v2
    public private(set) var isOpen = true
    private var hostToCard: [UInt8]
    private var cardToHost: [UInt8]
    private var counter: UInt64 = 0

    public static let label = Array("sc_v2_ccm".utf8)
    /// Largest inner APDU (header included).
    public static let maxInner = 247

    init(hostToCard: [UInt8], cardToHost: [UInt8]) {
        self.hostToCard = hostToCard
        self.cardToHost = cardToHost
    }

    deinit { close() }

    static func derive(salt: [UInt8], sharedX: SecretBytes) throws -> SecureChannelV2 {
        var okm = try KDF.hkdfSHA256(key: sharedX.revealedBytes(), salt: salt, info: label, length: 32).revealedBytes()
        defer { wipe(&okm) }
        return SecureChannelV2(hostToCard: Array(okm[0..<16]), cardToHost: Array(okm[16..<32]))
    }

    /// SHA-256("sc_v2_ccm" ‖ salt ‖ client key ‖ card key): what the card signs with its identity key.
    public static func transcriptDigest(salt: [UInt8], clientKey: [UInt8], cardKey: [UInt8]) -> [UInt8] {
        Hash.sha256(label + salt + clientKey + cardKey)
    }

    static func nonce(_ counter: UInt64) -> [UInt8] {
        [0, 0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
    }

    public func wrap(_ apdu: CommandAPDU) throws -> CommandAPDU {
        guard isOpen else { throw KeycardError.secureChannelNotOpen(KeycardInstruction(rawValue: apdu.ins)) }
        // The inner command holds its secrets (PIN, PUK, keys) in clear.
        var inner = [apdu.cla, apdu.ins, apdu.p1, apdu.p2, UInt8(truncatingIfNeeded: apdu.data.count)] + apdu.data
        defer { wipe(&inner) }
        guard apdu.data.count <= 255, inner.count <= SecureChannelV2.maxInner else {
            throw KeycardError.invalidArgument("\(KeycardInstruction(rawValue: apdu.ins)) of \(inner.count) bytes exceeds the secure channel v2 limit of \(SecureChannelV2.maxInner)")
        }
        let payload = try AESCCM.seal(inner, key: hostToCard, nonce: SecureChannelV2.nonce(counter))
        return CommandAPDU(cla: Keycard.cla, ins: KeycardInstruction.securedAPDU.rawValue, data: payload)
    }

    public func unwrap(_ response: ResponseAPDU, for command: CommandAPDU) throws -> ResponseAPDU {
        guard response.statusWord == .success else {
            close()
            return response
        }
        let ins = KeycardInstruction(rawValue: command.ins)
        guard let plaintext = try AESCCM.open(response.data, key: cardToHost, nonce: SecureChannelV2.nonce(counter)) else {
            close()
            throw KeycardError.invalidResponse(ins, "secure response fails authentication")
        }
        counter += 1
        guard plaintext.count >= 2 else {
            close()
            throw KeycardError.invalidResponse(ins, "secure response without a status word")
        }
        return try ResponseAPDU(bytes: plaintext)
    }

    public func close() {
        isOpen = false
        wipe(&hostToCard)
        wipe(&cardToHost)
    }
}
