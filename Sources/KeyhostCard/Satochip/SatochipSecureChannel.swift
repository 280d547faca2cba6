import KeyhostCrypto

/// The host side of Satochip's secure channel, as the applet checks it.
///
/// Keys: AES-128 key and HMAC-SHA1 key from the ECDH x coordinate (see `SatochipCrypto.sessionKeys`).
/// Each command goes in INS 82 as `[IV(16) | size(2) | AES-CBC(PKCS#7(apdu)) | 20(2) | HMAC-SHA1(IV | size | ct)]`,
/// the IV being 12 random bytes and a 4-byte counter the host keeps odd (1, 3, 5, …); the card refuses a counter
/// not above the last one it saw. The card answers `[IV(16) | size(2) | ciphertext]` with counter + 1 and no MAC.
final class SatochipSecureChannel {
    private let aesKey: SecretBytes
    private let macKey: SecretBytes
    private(set) var counter: UInt32 = 1
    private var lastSentCounter: UInt32 = 0

    /// Largest ciphertext accepted from the card (its APDU buffer is 255 bytes).
    static let maxCiphertext = 512

    init(sharedX: [UInt8]) throws {
        let keys = try SatochipCrypto.sessionKeys(sharedX: sharedX)
        aesKey = SecretBytes(keys.aes)
        macKey = SecretBytes(keys.mac)
    }

    /// `command` wrapped in PROCESS SECURE CHANNEL.
    func wrap(_ command: CommandAPDU, random: RandomSource) throws -> CommandAPDU {
        var iv = random.bytes(12)
        iv += [UInt8(truncatingIfNeeded: counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
               UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)]
        let plain = try command.encoded()
        let ciphertext = try SatochipCrypto.aes128CBC(plain, key: aesKey.revealedBytes(), iv: iv, encrypt: true)
        let macked = iv + [UInt8(ciphertext.count >> 8), UInt8(ciphertext.count & 0xFF)] + ciphertext
        let mac = try SatochipCrypto.hmacSHA1(key: macKey.revealedBytes(), data: macked)
        lastSentCounter = counter
        counter &+= 2
        return CommandAPDU(cla: Satochip.cla, ins: SatochipInstruction.processSecureChannel.rawValue,
                           data: macked + [0x00, 0x14] + mac)
    }

    /// The inner answer of an encrypted response: only 9000 answers with data are encrypted.
    func unwrap(_ response: ResponseAPDU, for instruction: SatochipInstruction) throws -> ResponseAPDU {
        guard response.statusWord == .success, !response.data.isEmpty else { return response }
        var reader = SatochipAnswerReader(response.data, instruction: instruction)
        let iv = try reader.take(16, "secure channel IV")
        let size = try reader.length("secure channel ciphertext", max: Self.maxCiphertext)
        guard size == reader.remaining else {
            throw SatochipError.invalidResponse(instruction, "secure channel ciphertext of \(reader.remaining) bytes, \(size) announced")
        }
        let answerCounter = iv[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard answerCounter == lastSentCounter &+ 1 else {
            throw SatochipError.invalidResponse(instruction, "secure channel answer IV counter \(answerCounter), \(lastSentCounter &+ 1) expected")
        }
        let ciphertext = try reader.take(size, "secure channel ciphertext")
        let plain: [UInt8]
        do { plain = try SatochipCrypto.aes128CBC(ciphertext, key: aesKey.revealedBytes(), iv: iv, encrypt: false) } catch {
            throw SatochipError.invalidResponse(instruction, "secure channel answer does not decrypt (bad padding)")
        }
        return ResponseAPDU(data: plain, statusWord: response.statusWord)
    }
}
