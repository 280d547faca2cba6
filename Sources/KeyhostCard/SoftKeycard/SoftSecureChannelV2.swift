import KeyhostCrypto

/// The card side of secure channel v2, following the 4.x applet's `SecureChannelV2.java`.
final class SoftSecureChannelV2 {
    private var hostToCard: [UInt8]?
    private var cardToHost: [UInt8]?
    private var counter: UInt64 = 0

    var isOpen: Bool { hostToCard != nil && cardToHost != nil }

    func reset() {
        if hostToCard != nil { wipe(&hostToCard!) }
        if cardToHost != nil { wipe(&cardToHost!) }
        hostToCard = nil
        cardToHost = nil
    }

    /// OPEN SECURE CHANNEL (INS 10): answers the card's ephemeral key ‖ DER identity signature over the transcript.
    func open(_ apdu: CommandAPDU, identityKey: PrivateKey, random: RandomSource) throws -> [UInt8] {
        guard apdu.data.count == 97 else { throw CardStatus(.wrongData) }
        guard apdu.p1 == 0, apdu.p2 == 0 else { throw CardStatus(.incorrectP1P2) }
        let salt = Array(apdu.data[0..<32])
        let clientKey = Array(apdu.data[32..<97])
        guard clientKey[0] == 0x04, let client = try? PublicKey(bytes: clientKey) else { throw CardStatus(.wrongData) }
        let ephemeral = random.privateKey()
        let cardKey = ephemeral.publicKey.uncompressed
        var okm = try KDF.hkdfSHA256(key: ephemeral.sharedSecretX(with: client).revealedBytes(), salt: salt,
                                     info: SecureChannelV2.label, length: 32).revealedBytes()
        defer { wipe(&okm) }
        let signature = try identityKey.sign(digest: SecureChannelV2.transcriptDigest(salt: salt, clientKey: clientKey, cardKey: cardKey))
        reset()
        hostToCard = Array(okm[0..<16])
        cardToHost = Array(okm[16..<32])
        counter = 0
        return cardKey + signature.der
    }

    /// Decrypts a SECURED APDU into the inner command; any failure resets the channel and answers 6982.
    func preprocess(_ apdu: CommandAPDU) throws -> CommandAPDU {
        guard isOpen, let hostToCard else { throw CardStatus(.conditionsNotSatisfied) }
        guard apdu.data.count >= 5 + AESCCM.tagSize,
              let inner = try? AESCCM.open(apdu.data, key: hostToCard, nonce: SecureChannelV2.nonce(counter)),
              inner.count >= 5, Int(inner[4]) == inner.count - 5 else {
            reset()
            throw CardStatus(.securityStatusNotSatisfied)
        }
        return CommandAPDU(cla: inner[0], ins: inner[1], p1: inner[2], p2: inner[3], data: Array(inner[5...]))
    }

    func respond(_ data: [UInt8], _ sw: StatusWord) -> ResponseAPDU {
        guard let cardToHost, let sealed = try? AESCCM.seal(data + [sw.sw1, sw.sw2], key: cardToHost, nonce: SecureChannelV2.nonce(counter)) else {
            return ResponseAPDU(statusWord: sw)
        }
        counter += 1
        return ResponseAPDU(data: sealed, statusWord: .success)
    }
}
