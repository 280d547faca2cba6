import Testing
import KeyhostCrypto
@testable import KeyhostCard

@Suite struct TranscriptTests {
    /// Runs a fixed session; with the same client randomness its commands are identical every time.
    func session(_ channel: CardChannel) throws -> (ApplicationStatus, KeycardSignature) {
        let card = KeycardCommandSet(channel: channel, random: SeededRandom(seed: "replay-client"),
                                     trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        try card.select()
        try card.initialize(pin: testPIN, puk: testPUK)
        try card.select()
        try card.openSecureChannel()
        try card.verifyPIN(testPIN)
        try card.loadKey(seed: testMnemonic.seed())
        let signature = try card.sign(digest: Hash.sha256([42]), mode: .derive(KeyPath("m/44'/60'/0'/0/0")))
        return (try card.getStatus(), signature)
    }

    @Test func recordAndReplay() throws {
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v4_0, randomSeed: [7]))
        let recorder = RecordingChannel(soft)
        let live = try session(recorder)
        let text = recorder.transcript.text
        #expect(text.hasPrefix(Transcript.header))
        #expect(try Transcript(text: text) == recorder.transcript)

        let replay = try ReplayChannel(text: text)
        let replayed = try session(replay)
        #expect(replay.isFinished)
        #expect(replayed.0 == live.0)
        #expect(replayed.1 == live.1)
        #expect(replayed.1.publicKey == (try HDNode(seed: testMnemonic.seed()).derive("m/44'/60'/0'/0/0")).publicKey)

        // A different client (other randomness) diverges at its first random command.
        let other = KeycardCommandSet(channel: try ReplayChannel(text: text), random: SeededRandom(seed: "someone else"),
                                      trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        try other.select()
        #expect(throws: CardChannelError.self) { try other.initialize(pin: testPIN, puk: testPUK) }
    }

    @Test func dropsAreRecorded() throws {
        let soft = try SoftKeycard()
        let recorder = RecordingChannel(soft)
        soft.injectFault(.connectionDrop)
        #expect(throws: CardChannelError.connectionLost) { try recorder.transmit(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, data: Keycard.instanceAID)) }
        let text = recorder.transcript.text
        #expect(text.contains("! connection lost"))
        let replay = try ReplayChannel(text: text)
        #expect(throws: CardChannelError.connectionLost) { try replay.transmit(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, data: Keycard.instanceAID)) }
        #expect(throws: CardChannelError.badTranscript(line: 2, reason: "response without a command")) { try Transcript(text: "# x\n< 9000\n") }
    }
}
