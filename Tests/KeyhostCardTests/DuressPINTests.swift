import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The applet's duress (alternate) PIN, as the real KeycardApplet INIT and VERIFY PIN do it: a decoy wallet whose
/// chain code is SHA-256 of the master chain code, chosen whenever the duress PIN matches (it wins over the PIN).
/// Expected keys come from KeyhostCrypto's BIP32 on an xprv rebuilt with that chain code, not from the card model.
@Suite struct DuressPINTests {
    static let path = "m/44'/60'/0'/0/0"

    /// The real wallet's and the decoy's public keys at `path`.
    static func expectedKeys() throws -> (real: [UInt8], duress: [UInt8]) {
        let master = try HDNode(seed: testMnemonic.seed())
        var payload = try Base58.decodeCheck(try master.extendedPrivateKey())
        let chainCode = Array(payload[13..<45])
        payload.replaceSubrange(13..<45, with: Hash.sha256(chainCode))
        let decoy = try HDNode(extendedKey: Base58.encodeCheck(payload))
        return (try master.derive(path).publicKey.compressed, try decoy.derive(path).publicKey.compressed)
    }

    /// INIT (as asked), load the test mnemonic, verify `verify`, export the key at `path`.
    func exported(_ version: AppletVersion, verify: String, duress: String? = nil, appletDefault: Bool = false) throws -> [UInt8] {
        let pair = try makeCard(version)
        let v1 = try pair.client.select().secureChannelVersion == .v1
        try pair.client.initialize(pin: testPIN, puk: testPUK, pairingSecret: v1 ? PairingSecret.derive(password: testPairingPassword) : nil,
                                   alternatePIN: duress, appletDefaultDuressPIN: appletDefault)
        try pair.client.select()
        if v1 { try pair.client.pair(password: testPairingPassword) }
        try pair.client.openSecureChannel()
        try pair.client.verifyPIN(testPIN)
        _ = try pair.client.loadKey(seed: testMnemonic.seed())
        try pair.client.openSecureChannel() // a fresh session, as after re-inserting the card
        try pair.client.verifyPIN(verify)
        return try #require(pair.client.exportKey(.publicOnly, path: KeyPath(Self.path)).resolvedPublicKey).compressed
    }

    /// What other tools do (INIT without a duress PIN): a 4.0 card opens the decoy with the PIN itself.
    @Test func appletDefaultOn40MakesThePINOpenTheDecoy() throws {
        let keys = try Self.expectedKeys()
        #expect(try exported(.v4_0, verify: testPIN, appletDefault: true) == keys.duress)
    }

    /// On 3.2 the default duress PIN is the PUK's first six digits.
    @Test func appletDefaultOn32IsThePUKsFirstDigits() throws {
        let keys = try Self.expectedKeys()
        #expect(try exported(.v3_2, verify: testPIN, appletDefault: true) == keys.real)
        #expect(try exported(.v3_2, verify: String(testPUK.prefix(6)), appletDefault: true) == keys.duress)
    }

    /// keyhost's INIT: the PIN opens the real wallet on both applets; a chosen duress PIN opens the decoy.
    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func keyhostInitKeepsThePINOnTheRealWallet(_ version: AppletVersion) throws {
        let keys = try Self.expectedKeys()
        #expect(try exported(version, verify: testPIN) == keys.real)
        #expect(try exported(version, verify: "246810", duress: "246810") == keys.duress)
        #expect(try exported(version, verify: testPIN, duress: "246810") == keys.real)
    }
}
