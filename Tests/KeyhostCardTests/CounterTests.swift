import Testing
import KeyhostCrypto
@testable import KeyhostCard

@Suite struct CounterTests {
    static let versions: [AppletVersion] = [.v3_2, .v4_0]

    @Test(arguments: versions)
    func wrongPINBlocksAndPUKUnblocks(_ version: AppletVersion) throws {
        let card = try makeReadyCard(version).client
        #expect(throws: KeycardError.wrongPIN(triesLeft: 2)) { try card.verifyPIN("000000") }
        #expect(throws: KeycardError.wrongPIN(triesLeft: 1)) { try card.verifyPIN("000000") }
        #expect(throws: KeycardError.pinBlocked) { try card.verifyPIN("000000") }
        // Blocked: even the right PIN fails with 63C0, and PIN-protected commands refuse.
        #expect(throws: KeycardError.pinBlocked) { try card.verifyPIN(testPIN) }
        #expect(throws: KeycardError.conditionsNotSatisfied(.generateKey)) { try card.generateKey() }
        #expect(try card.getStatus() == ApplicationStatus(pinRetries: 0, pukRetries: 5, hasMasterKey: false))
        if version.major >= 4 { #expect(try card.select().pinRetries == 0); try card.openSecureChannel() }
        #expect(throws: KeycardError.wrongPUK(triesLeft: 4)) { try card.unblockPIN(puk: "000000000000", newPIN: "112233") }
        try card.unblockPIN(puk: testPUK, newPIN: "112233")
        // UNBLOCK verifies the new PIN and resets both counters.
        #expect(try card.getStatus() == ApplicationStatus(pinRetries: 3, pukRetries: 5, hasMasterKey: false))
        try card.generateKey()
        // UNBLOCK only while blocked.
        #expect(throws: KeycardError.conditionsNotSatisfied(.unblockPIN)) { try card.unblockPIN(puk: testPUK, newPIN: "112233") }
        // A malformed PIN is rejected without spending a try.
        #expect(throws: KeycardError.wrongData(.verifyPIN)) { try card.verifyPIN("12ab56") }
        #expect(try card.getStatus().pinRetries == 3)
    }

    @Test(arguments: versions)
    func pukExhaustionBricksUntilFactoryReset(_ version: AppletVersion) throws {
        let card = try makeReadyCard(version).client
        for _ in 0..<3 { _ = try? card.verifyPIN("000000") }
        for tries in stride(from: 4, through: 1, by: -1) {
            #expect(throws: KeycardError.wrongPUK(triesLeft: tries)) { try card.unblockPIN(puk: "000000000000", newPIN: "112233") }
        }
        #expect(throws: KeycardError.pukBlocked) { try card.unblockPIN(puk: "000000000000", newPIN: "112233") }
        // Now nothing opens it: right PUK and right PIN both fail.
        #expect(throws: KeycardError.pukBlocked) { try card.unblockPIN(puk: testPUK, newPIN: "112233") }
        #expect(throws: KeycardError.pinBlocked) { try card.verifyPIN(testPIN) }
        #expect(try card.getStatus() == ApplicationStatus(pinRetries: 0, pukRetries: 0, hasMasterKey: false))
        // FACTORY RESET needs neither PIN nor channel.
        try card.factoryReset()
        #expect(!(try card.select().isInitialized))
    }

    @Test func alternatePINSelectsAlternateKeys() throws {
        // 3.2: the alternate PIN defaults to the PUK's first six digits (an INIT that leaves it to the
        // applet, as other tools do) and derives with SHA-256(chain code).
        let pair = try makeCard(.v3_2)
        let card = pair.client
        try card.select()
        try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: PairingSecret.derive(password: testPairingPassword), appletDefaultDuressPIN: true)
        try card.select()
        try card.pair(password: testPairingPassword)
        try card.openSecureChannel()
        try card.verifyPIN(testPIN)
        try card.loadKey(seed: testMnemonic.seed())
        let normal = try card.exportKey(.publicOnly, path: KeyPath("m/44'/60'/0'/0/0")).publicKey
        try card.select()
        try card.openSecureChannel()
        try card.verifyPIN(String(testPUK.prefix(6)))
        let alternate = try card.exportKey(.publicOnly, path: KeyPath("m/44'/60'/0'/0/0")).publicKey
        #expect(normal != alternate)
        // The master key is the same; only derived keys differ.
        #expect(try card.sign(digest: Hash.sha256([0])).publicKey == (try HDNode(seed: testMnemonic.seed())).publicKey)
    }

    @Test func pairingSlotsRunOut() throws {
        let pair = try makeCard(.v3_2, pairingSlots: 3)
        let card = pair.client
        try card.select()
        try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: PairingSecret.derive(password: testPairingPassword))
        #expect(try card.select().freePairingSlots == 3)
        let secret = try PairingSecret.derive(password: testPairingPassword)
        let indexes = try (0..<3).map { _ in try card.pair(secret: secret, mode: .persistent).index }
        #expect(indexes == [0, 1, 2])
        #expect(try card.select().freePairingSlots == 0)
        #expect(throws: KeycardError.noFreePairingSlot) { try card.pair(secret: secret, mode: .persistent) }
        // Mode "any" falls back to the ephemeral slot, which works for this session only.
        let ephemeral = try card.pair(secret: secret, mode: .any)
        #expect(ephemeral.index == Pairing.ephemeralIndex)
        try card.openSecureChannel()
        try card.verifyPIN(testPIN)
        // A wrong pairing secret is caught by the card's cryptogram.
        try card.select()
        #expect(throws: KeycardError.pairingCryptogramMismatch) { try card.pair(password: "not the secret") }
        // A pairing with the wrong key: the card's MUTUALLY AUTHENTICATE answer does not verify.
        card.pairing = try Pairing(index: 0, key: Hash.sha256(secret.revealedBytes()))
        #expect(throws: KeycardError.self) { try card.openSecureChannel() }
    }

    @Test(arguments: versions)
    func securityStatusResetsTheChannel(_ version: AppletVersion) throws {
        let pair = try makeReadyCard(version)
        let card = pair.client
        let sc = try #require(card.secureChannel)
        // A command whose authentication fails: the card answers 6982 in clear and drops the channel.
        var wrapped = try sc.wrap(CommandAPDU(cla: 0x80, ins: KeycardInstruction.getStatus.rawValue))
        wrapped.data[0] ^= 0x01
        let answer = try pair.soft.transmit(wrapped)
        #expect(answer.statusWord == .securityStatusNotSatisfied)
        #expect(answer.data.isEmpty)
        // The old session is dead on the card: the next command is refused and the client drops its side.
        #expect(throws: KeycardError.self) { try card.getStatus() }
        #expect(!card.isSecureChannelOpen)
        // A new session works and the PIN must be verified again.
        try card.select()
        try card.openSecureChannel()
        #expect(throws: KeycardError.conditionsNotSatisfied(.generateKey)) { try card.generateKey() }
        try card.verifyPIN(testPIN)
        try card.generateKey()
    }

    @Test(arguments: versions)
    func injectedFaults(_ version: AppletVersion) throws {
        let pair = try makeReadyCard(version)
        pair.soft.injectFault(.statusWord(StatusWord(0x6F99)))
        #expect(throws: KeycardError.status(StatusWord(0x6F99), .getStatus)) { try pair.client.getStatus() }
        // The outer failure closed the client's channel.
        #expect(!pair.client.isSecureChannelOpen)
        try pair.client.select()
        try pair.client.openSecureChannel()
        pair.soft.injectFault(.connectionDrop)
        #expect(throws: CardChannelError.connectionLost) { try pair.client.getStatus() }
        // After the drop the card lost its session too.
        try pair.client.select()
        try pair.client.openSecureChannel()
        try pair.client.verifyPIN(testPIN)
        #expect(try pair.client.getStatus().pinRetries == 3)
    }

    @Test func unknownInstructionAnswerUsesPreviousIV() throws {
        // 3.x answers an unknown INS before reading the command MAC, so the error is encrypted under the old IV.
        let pair = try makeReadyCard(.v3_2)
        #expect(throws: KeycardError.instructionNotSupported(KeycardInstruction(rawValue: 0x99))) {
            try pair.client.sendSecure(KeycardInstruction(rawValue: 0x99))
        }
        #expect(throws: KeycardError.incorrectParameters(.sign, .wrongP1P2)) {
            try pair.client.sendSecure(.sign, p1: 0x07, data: [UInt8](repeating: 0, count: 32))
        }
        // The channel stays usable.
        #expect(try pair.client.getStatus().pinRetries == 3)
    }
}
