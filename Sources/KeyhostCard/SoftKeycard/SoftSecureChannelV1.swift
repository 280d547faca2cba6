import KeyhostCrypto

/// The card side of secure channel v1, following the 3.2 applet's `SecureChannel.java`.
final class SoftSecureChannelV1 {
    private var encKey: [UInt8]?
    private var macKey: [UInt8]?
    /// The running IV: the last MAC seen or sent.
    private var iv = [UInt8](repeating: 0, count: 16)
    private var mutuallyAuthenticated = false

    var isOpen: Bool { encKey != nil && macKey != nil && mutuallyAuthenticated }
    var hasKeys: Bool { encKey != nil }

    func reset() {
        if encKey != nil { wipe(&encKey!) }
        if macKey != nil { wipe(&macKey!) }
        encKey = nil
        macKey = nil
        mutuallyAuthenticated = false
    }

    /// OPEN SECURE CHANNEL: ECDH with the client's key, fresh salt and IV; answers salt ‖ IV.
    func open(clientKey: [UInt8], pairingKey: [UInt8], cardKey: PrivateKey, random: RandomSource) throws -> [UInt8] {
        mutuallyAuthenticated = false
        guard let client = try? PublicKey(bytes: clientKey) else { throw CardStatus(.wrongData) }
        let shared = try cardKey.sharedSecretX(with: client)
        let salt = random.bytes(32)
        let newIV = random.bytes(16)
        var input = shared.revealedBytes() + pairingKey + salt
        defer { wipe(&input) }
        let k = Hash.sha512(input)
        reset()
        encKey = Array(k[0..<32])
        macKey = Array(k[32..<64])
        iv = newIV
        return salt + newIV
    }

    /// MUTUALLY AUTHENTICATE.
    func mutuallyAuthenticate(_ apdu: CommandAPDU, random: RandomSource) throws -> [UInt8] {
        guard hasKeys else { throw CardStatus(.conditionsNotSatisfied) }
        let wasAuthenticated = mutuallyAuthenticated
        mutuallyAuthenticated = true
        let data = try preprocess(apdu)
        if wasAuthenticated { throw CardStatus(.conditionsNotSatisfied) }
        guard data.count == 32 else {
            reset()
            throw CardStatus(.securityStatusNotSatisfied)
        }
        return random.bytes(32)
    }

    /// Checks the command MAC and decrypts; a bad MAC resets the channel and answers 6982.
    func preprocess(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard isOpen, let encKey, let macKey else { throw CardStatus(.conditionsNotSatisfied) }
        let data = apdu.data
        guard data.count >= 32, data.count % 16 == 0 else {
            reset()
            throw CardStatus(.securityStatusNotSatisfied)
        }
        let mac = Array(data[0..<16])
        let ciphertext = Array(data[16...])
        let meta = [apdu.cla, apdu.ins, apdu.p1, apdu.p2, UInt8(truncatingIfNeeded: data.count)] + [UInt8](repeating: 0, count: 11)
        guard (try? CBCMAC.mac(key: macKey, data: meta + ciphertext)) == mac else {
            reset()
            throw CardStatus(.securityStatusNotSatisfied)
        }
        let plain = try? ISO9797M2.unpad(AES256CBC.decrypt(ciphertext, key: encKey, iv: iv))
        iv = mac
        guard let plain else { throw CardStatus(.unknown) }
        return plain
    }

    /// Encrypts `data ‖ sw` under the running IV and MACs it; the MAC becomes the next IV.
    func respond(_ data: [UInt8], _ sw: StatusWord) -> ResponseAPDU {
        guard let encKey, let macKey,
              let ciphertext = try? AES256CBC.encrypt(ISO9797M2.pad(data + [sw.sw1, sw.sw2]), key: encKey, iv: iv),
              let mac = try? CBCMAC.mac(key: macKey, data: [UInt8(truncatingIfNeeded: ciphertext.count + 16)] + [UInt8](repeating: 0, count: 15) + ciphertext) else {
            return ResponseAPDU(statusWord: sw)
        }
        iv = mac
        return ResponseAPDU(data: mac + ciphertext, statusWord: .success)
    }
}
