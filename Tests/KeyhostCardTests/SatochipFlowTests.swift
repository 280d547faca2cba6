import Testing
import KeyhostCrypto
@testable import KeyhostCard

let satochipPIN = SecretBytes(Array("1234".utf8))
let satochipPUK = SecretBytes(Array("87654321".utf8))

/// A fresh soft Satochip and a client, both with seeded randomness.
func makeSatochip(seed: String = "satochip") throws -> (card: SoftSatochip, client: SatochipCommandSet) {
    let card = try SoftSatochip(options: SoftSatochipOptions(randomSeed: Array(seed.utf8)))
    return (card, SatochipCommandSet(channel: card, random: SeededRandom(seed: "client-" + seed)))
}

/// SELECT, SETUP, VERIFY PIN.
func makeReadySatochip(seed: String = "satochip") throws -> (card: SoftSatochip, client: SatochipCommandSet) {
    let pair = try makeSatochip(seed: seed)
    try pair.client.select()
    try pair.client.setup(pin: satochipPIN, puk: satochipPUK, pinTries: 3, pukTries: 2)
    try pair.client.verifyPIN(satochipPIN)
    return pair
}

/// The client against the software card through every flow. Keys are checked against BIP32's published test
/// vectors, signatures by verification under the xpub's key.
@Suite struct SatochipFlowTests {
    @Test func statusBeforeAndAfterSetup() throws {
        let pair = try makeSatochip()
        let before = try pair.client.select()
        #expect(before.version == "0.12-0.6")
        #expect(!before.isSetupDone && !before.isSeeded && before.needsSecureChannel)
        #expect(before.pinTriesLeft == 0 && before.pukTriesLeft == 0)
        // Everything but GET STATUS goes through the secure channel, and before SETUP the card refuses it.
        #expect(throws: SatochipError.setupNotDone(.verifyPIN)) { try pair.client.verifyPIN(satochipPIN) }
        #expect(pair.client.isSecureChannelOpen)
        try pair.client.setup(pin: satochipPIN, puk: satochipPUK, pinTries: 4, pukTries: 2)
        let after = try pair.client.getStatus()
        #expect(after.isSetupDone && !after.isSeeded)
        #expect(after.pinTriesLeft == 4 && after.pukTriesLeft == 2)
        #expect(throws: SatochipError.setupAlreadyDone) { try pair.client.setup(pin: satochipPIN, puk: satochipPUK) }
    }

    @Test func plainCommandsAreRefusedOnceTheCardWantsTheChannel() throws {
        let pair = try makeSatochip()
        try pair.client.select()
        let plain = try pair.card.transmit(CommandAPDU(cla: 0xB0, ins: 0x42, data: Array("1234".utf8)))
        #expect(plain.statusWord == StatusWord(0x9C20))
        let noChannel = try pair.card.transmit(CommandAPDU(cla: 0xB0, ins: 0x82, data: [UInt8](repeating: 0, count: 40)))
        #expect(noChannel.statusWord == StatusWord(0x9C21))
    }

    @Test func wrongPINCountsDownBlocksAndThePUKUnblocks() throws {
        let pair = try makeReadySatochip()
        let wrong = SecretBytes(Array("0000".utf8))
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.verifyPIN(wrong) }
        // A wrong PIN logs the PIN out.
        #expect(throws: SatochipError.pinRequired(.cardLabel)) { try pair.client.setLabel("x") }
        try pair.client.verifyPIN(satochipPIN)
        #expect(try pair.client.getStatus().pinTriesLeft == 3)
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.verifyPIN(wrong) }
        #expect(throws: SatochipError.wrongPIN(triesLeft: 1)) { try pair.client.verifyPIN(wrong) }
        #expect(throws: SatochipError.pinBlocked) { try pair.client.verifyPIN(wrong) }
        #expect(throws: SatochipError.pinBlocked) { try pair.client.verifyPIN(satochipPIN) }
        #expect(try pair.client.getStatus().pinTriesLeft == 0)
        #expect(throws: SatochipError.wrongPUK(triesLeft: 1)) { try pair.client.unblockPIN(puk: SecretBytes(Array("11111111".utf8))) }
        try pair.client.unblockPIN(puk: satochipPUK)
        #expect(try pair.client.getStatus().pinTriesLeft == 3)
        #expect(try pair.client.getStatus().pukTriesLeft == 2)
        try pair.client.verifyPIN(satochipPIN)
        // UNBLOCK of a PIN that is not blocked is refused.
        #expect(throws: SatochipError.operationNotAllowed(.unblockPIN)) { try pair.client.unblockPIN(puk: satochipPUK) }
    }

    @Test func aTryLimitAbove15CountsInSixBits() throws {
        let pair = try makeSatochip()
        try pair.client.select()
        try pair.client.setup(pin: satochipPIN, puk: satochipPUK, pinTries: 40, pukTries: 3)
        #expect(throws: SatochipError.wrongPIN(triesLeft: 39)) { try pair.client.verifyPIN(SecretBytes(Array("0000".utf8))) }
        #expect(try pair.client.getStatus().pinTriesLeft == 39)
    }

    @Test func pukBlocks() throws {
        let pair = try makeReadySatochip()
        for _ in 0..<3 { _ = try? pair.client.verifyPIN(SecretBytes(Array("0000".utf8))) }
        let wrong = SecretBytes(Array("11111111".utf8))
        #expect(throws: SatochipError.wrongPUK(triesLeft: 1)) { try pair.client.unblockPIN(puk: wrong) }
        #expect(throws: SatochipError.pukBlocked) { try pair.client.unblockPIN(puk: wrong) }
        #expect(throws: SatochipError.pukBlocked) { try pair.client.unblockPIN(puk: satochipPUK) }
    }

    @Test func changePINLogsOutAndTheNewPINWorks() throws {
        let pair = try makeReadySatochip()
        let newPIN = SecretBytes(Array("246810".utf8))
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.changePIN(old: SecretBytes(Array("9999".utf8)), new: newPIN) }
        try pair.client.verifyPIN(satochipPIN)
        try pair.client.changePIN(old: satochipPIN, new: newPIN)
        #expect(throws: SatochipError.pinRequired(.cardLabel)) { try pair.client.label() }
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.verifyPIN(satochipPIN) }
        try pair.client.verifyPIN(newPIN)
        #expect(throws: SatochipError.invalidArgument("a new PIN is 4 to 16 bytes, this one has 3")) {
            try pair.client.changePIN(old: newPIN, new: SecretBytes(Array("123".utf8)))
        }
    }

    @Test func labelRoundTripsAndSurvivesPower() throws {
        let pair = try makeReadySatochip()
        #expect(try pair.client.label() == "")
        try pair.client.setLabel("my sato ✓")
        #expect(try pair.client.label() == "my sato ✓")
        pair.card.powerCycle()
        try pair.client.select()
        try pair.client.verifyPIN(satochipPIN)
        #expect(try pair.client.label() == "my sato ✓")
        #expect(throws: SatochipError.self) { try pair.client.setLabel(String(repeating: "x", count: 65)) }
    }

    /// BIP32 test vector 1 and 2 seeds: the card's xpubs equal the ones BIP32 publishes.
    @Test(arguments: [
        ("000102030405060708090a0b0c0d0e0f", "m",
         "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"),
        ("000102030405060708090a0b0c0d0e0f", "m/0'",
         "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw"),
        ("000102030405060708090a0b0c0d0e0f", "m/0'/1",
         "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"),
        ("000102030405060708090a0b0c0d0e0f", "m/0'/1/2'/2/1000000000",
         "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy"),
        ("fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542",
         "m/0",
         "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH"),
    ])
    func bip32Vectors(_ vector: (String, String, String)) throws {
        let pair = try makeReadySatochip()
        let authentikey = try pair.client.importSeed(SecretBytes(hex(vector.0)))
        #expect(authentikey == (try PrivateKey(bytes: pair.card.state.authentikey)).publicKey)
        let node = try pair.client.extendedPublicKey(at: try DerivationPath(vector.1))
        #expect(node.extendedPublicKey() == vector.2)
    }

    @Test func signHashVerifiesUnderTheXpubKey() throws {
        let pair = try makeReadySatochip()
        try pair.client.importSeed(SecretBytes(hex("000102030405060708090a0b0c0d0e0f")))
        #expect(throws: SatochipError.invalidArgument("no BIP32 key is loaded; derive one first (extendedKey(at:))")) {
            try pair.client.signHash(Hash.sha256([1]))
        }
        let path = try DerivationPath("m/84'/0'/0'/0/5")
        let node = try pair.client.extendedPublicKey(at: path)
        let hash = Hash.sha256(Array("a transaction".utf8))
        let signature = try pair.client.signHash(hash)
        #expect(try node.publicKey.verify(signature, digest: hash))
        #expect(signature.isLowS)
        let recoverable = try pair.client.signHashRecoverable(hash, at: path)
        #expect(try recoverable.recoverPublicKey(digest: hash) == node.publicKey)
        let expected = try HDNode(seed: hex("000102030405060708090a0b0c0d0e0f")).derive(path)
        #expect(node.publicKey == expected.publicKey)
        let message = try pair.client.signMessage(Array("hello".utf8), at: path)
        #expect(try message.recoverPublicKey(digest: BitcoinMessage.hash(Array("hello".utf8))) == node.publicKey)
    }

    @Test func seedRulesAndReset() throws {
        let pair = try makeReadySatochip()
        #expect(throws: SatochipError.notSeeded(.getAuthentikey)) { try pair.client.getAuthentikey() }
        try pair.client.importSeed(SecretBytes([UInt8](repeating: 7, count: 32)))
        #expect(try pair.client.getStatus().isSeeded)
        #expect(throws: SatochipError.alreadySeeded) { try pair.client.importSeed(SecretBytes([UInt8](repeating: 8, count: 32))) }
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.resetSeed(pin: SecretBytes(Array("0000".utf8))) }
        try pair.client.verifyPIN(satochipPIN)
        try pair.client.resetSeed(pin: satochipPIN)
        #expect(try !pair.client.getStatus().isSeeded)
        // RESET SEED logs the PIN out.
        #expect(throws: SatochipError.pinRequired(.importSeed)) { try pair.client.importSeed(SecretBytes([UInt8](repeating: 8, count: 32))) }
    }

    @Test func theSignWithoutDerivationAnswer() throws {
        let pair = try makeReadySatochip()
        try pair.client.importSeed(SecretBytes([UInt8](repeating: 7, count: 32)))
        #expect(throws: SatochipError.incorrectInitialization(.signTransactionHash)) {
            try pair.client.send(.signTransactionHash, p1: 0xFF, data: [UInt8](repeating: 1, count: 32))
        }
    }

    @Test func authenticityWithTheTestCA() throws {
        let fresh = try makeSatochip()
        // Before SELECT the card manager answers GET DATA: the serial is SHA-1 of the CPLC (this card has no IIN/CIN).
        let serial = try fresh.client.readSerial()
        #expect(serial == Hex.encode(try SatochipCrypto.sha1([0x9F, 0x7F, 42] + fresh.card.state.cplc)))
        let pair = try makeReadySatochip()  // the same seed: the same card
        #expect(try pair.client.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey], serial: serial).issuer
                == SoftSatochip.testCAKey().publicKey)
        #expect(throws: SatochipError.self) {
            try pair.client.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey], serial: String(repeating: "0", count: 40))
        }
        let result = try pair.client.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey])
        #expect(result.deviceKey == (try PrivateKey(bytes: pair.card.state.authentikey)).publicKey)
        #expect(result.certificate.subjectCommonName == (try SoftSatochip.serial(cplc: pair.card.state.cplc)))
        #expect(throws: SatochipError.notGenuine("the device certificate is not signed by any of the 1 trusted CA keys")) {
            try pair.client.verifyAuthenticity(caKeys: [PrivateKey.generate().publicKey])
        }
        // A card holding a certificate for another key fails the challenge-response.
        let other = try makeReadySatochip(seed: "other")
        other.card.state.certificate = pair.card.state.certificate
        #expect(throws: SatochipError.notGenuine("the card cannot sign with the key its certificate names (challenge-response failed)")) {
            try other.client.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey])
        }
    }

    @Test func powerCycleDropsTheChannelAndThePIN() throws {
        let pair = try makeReadySatochip()
        pair.card.powerCycle()
        // Nothing is selected after power-up: the applet does not answer until SELECT.
        #expect(throws: SatochipError.self) { try pair.client.label() }
        try pair.client.select()
        #expect(throws: SatochipError.pinRequired(.cardLabel)) { try pair.client.label() }
    }
}
