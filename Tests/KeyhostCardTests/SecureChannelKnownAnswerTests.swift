import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// Known answers from keycard-go `crypto/crypto_test.go` (the reference client's own tests).
@Suite struct SecureChannelKnownAnswerTests {
    @Test func v1SessionKeys() throws {
        let shared = SecretBytes(hex("B410E816DA313545151807E25A830201FA389913A977066AB0C6DE0E8631E400"))
        let pairingKey = SecretBytes(hex("544FF0B9B0737E4BFC4ECDFCE09F522B837051BBE4FFCEC494FA420D8525670E"))
        let cardData = hex("1D7C033E75E10EC578AB538F69F1B02538571BA3831441F1649E3F24B5B3E3E71D7BC2D6A3D02FC8CB2FBB3FD8711BB5")
        // K = SHA-512(shared ‖ pairing key ‖ salt)
        let k = Hash.sha512(shared.revealedBytes() + pairingKey.revealedBytes() + Array(cardData[0..<32]))
        #expect(Array(k[0..<32]) == hex("4FF496554C01BAE0A52323E3481B448C99D43982118D95C6918FE0354D224B90"))
        #expect(Array(k[32..<64]) == hex("185811013138EA1B4FFDBBFA7343EF2DBE3E54C2C231885E867F792448AC2FE5"))
        let channel = SecureChannelV1.derive(sharedSecret: shared, pairingKey: pairingKey, salt: Array(cardData[0..<32]), iv: Array(cardData[32...]))
        // The derived channel encrypts with that key and IV: check by wrapping and decrypting by hand.
        let wrapped = try channel.wrap(CommandAPDU(cla: 0x80, ins: 0xF2, data: [1, 2, 3]))
        let plain = try ISO9797M2.unpad(AES256CBC.decrypt(Array(wrapped.data[16...]), key: Array(k[0..<32]), iv: hex("1D7BC2D6A3D02FC8CB2FBB3FD8711BB5")))
        #expect(plain == [1, 2, 3])
        let mac = try CBCMAC.mac(key: Array(k[32..<64]), data: [0x80, 0xF2, 0, 0, 32] + [UInt8](repeating: 0, count: 11) + Array(wrapped.data[16...]))
        #expect(Array(wrapped.data[0..<16]) == mac)
    }

    @Test func v1PaddedEncryption() throws {
        let data = hex("A8A686D0E3290459BCB36088A8FD04A76BF13283BE4B1EAE2E1248EF609F94DC")
        let encrypted = try AES256CBC.encrypt(ISO9797M2.pad(data), key: hex("44D689AB4B18206F7EEE5439FB9A71A8A617406BA5259728D1EBC2786D24896C"),
                                              iv: hex("9D3EF41EF1D221DD98A54AD5470F58F2"))
        #expect(encrypted == hex("FFB41FED5F71A2B57A6AE62D5D5ECD1C12616F6464637DD0A7A930920ACBA55867A7E12CC4F06B089AF34FF4ED4BAB08"))
        let decrypted = try ISO9797M2.unpad(AES256CBC.decrypt(
            hex("73B58B66372E3446E14A9F54BA59666DB432E9DD87D24F9B0525180EE52DA2106E0C70EED7CD42B5B313E4443D6AC90D"),
            key: hex("D93D8E6164196D5C5B5F84F10E4B90D98F8D282ED145513ED666AA55C9871E79"), iv: hex("F959B1220333046D3C47D61B1E1B891B")))
        #expect(decrypted == hex("2E21F9F2B2C2CC9038D518A5C6B490613E7955BD19D19108B77786986B7ABFE69000"))
    }

    @Test func pairingSecretNormalisesPassword() throws {
        let composed = try PairingSecret.derive(password: "caf\u{E9}")
        let decomposed = try PairingSecret.derive(password: "cafe\u{301}")
        #expect(composed == decomposed)
        let direct = try KDF.pbkdf2SHA256(password: Array("cafe\u{301}".utf8), salt: Array("Keycard Pairing Password Salt".utf8), iterations: 50_000, length: 32)
        #expect(composed == direct)
        // From bytes (never a String, for ASCII): the same secret, NFKD applied to the rest.
        #expect(try PairingSecret.derive(password: SecretBytes(Array("KeycardTest".utf8))) == PairingSecret.derive(password: "KeycardTest"))
        #expect(try PairingSecret.derive(password: SecretBytes(Array("caf\u{E9}".utf8))) == composed)
    }

    @Test func ccmRoundTripAndTamper() throws {
        let key = [UInt8](repeating: 0x42, count: 16)
        let nonce = SecureChannelV2.nonce(7)
        #expect(nonce == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7])
        let sealed = try AESCCM.seal([0x80, 0xF2, 0, 0, 0], key: key, nonce: nonce)
        #expect(sealed.count == 5 + 8)
        #expect(try AESCCM.open(sealed, key: key, nonce: nonce) == [0x80, 0xF2, 0, 0, 0])
        var tampered = sealed
        tampered[0] ^= 1
        #expect(try AESCCM.open(tampered, key: key, nonce: nonce) == nil)
        #expect(try AESCCM.open(sealed, key: key, nonce: SecureChannelV2.nonce(8)) == nil)
    }
}
