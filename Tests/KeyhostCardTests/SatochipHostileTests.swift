import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// A card that answers SELECT and GET STATUS as a set-up card without secure channel, and every other command
/// with the next scripted answer: what a hostile or broken card (or reader path) can send.
final class ScriptedSatochip: CardChannel {
    var answers: [ResponseAPDU]
    var status: [UInt8] = [0, 12, 0, 6, 3, 3, 3, 3, 0, 1, 1, 0]

    init(_ answers: [ResponseAPDU]) { self.answers = answers }

    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        if apdu.ins == 0xA4 { return ResponseAPDU(statusWord: .success) }
        if apdu.ins == 0x3C { return ResponseAPDU(data: status, statusWord: .success) }
        guard !answers.isEmpty else { return ResponseAPDU(statusWord: StatusWord(0x6F00)) }
        return answers.removeFirst()
    }
}

/// Flips one byte of the next PROCESS SECURE CHANNEL command on its way to the card.
final class TamperingChannel: CardChannel {
    let card: CardChannel
    var flipAt: Int?

    init(_ card: CardChannel) { self.card = card }

    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        var apdu = apdu
        if apdu.ins == 0x82, let index = flipAt, index < apdu.data.count {
            apdu.data[index] ^= 0x01
            flipAt = nil
        }
        return try card.transmit(apdu)
    }
}

@Suite struct SatochipHostileTests {
    @Test func aFlippedMACOrCiphertextByteIsRefused() throws {
        let card = try SoftSatochip(options: SoftSatochipOptions(randomSeed: Array("tamper".utf8)))
        let wire = TamperingChannel(card)
        let client = SatochipCommandSet(channel: wire, random: SeededRandom(seed: "client"))
        try client.select()
        try client.setup(pin: satochipPIN, puk: satochipPUK)
        // Last byte of the data: inside the MAC. Byte 20: inside the ciphertext, which the MAC covers.
        for index in [-1, 20, 3] {
            let command = try SatochipSecureChannel(sharedX: [UInt8](repeating: 1, count: 32))
                .wrap(CommandAPDU(cla: 0xB0, ins: 0x42, data: Array("1234".utf8)), random: SeededRandom(seed: "x"))
            wire.flipAt = index < 0 ? command.data.count - 1 : index
            #expect(throws: SatochipError.secureChannelRejected(.verifyPIN, StatusWord(0x9C23))) { try client.verifyPIN(satochipPIN) }
            #expect(!client.isSecureChannelOpen)
            // The rejected command did not reach the PIN check: no try was spent.
            #expect(try client.getStatus().pinTriesLeft == 5)
        }
        try client.verifyPIN(satochipPIN)
    }

    @Test func aReplayedCommandIsRefused() throws {
        let card = try SoftSatochip(options: SoftSatochipOptions(randomSeed: Array("replay".utf8)))
        let recorder = RecordingChannel(card)
        let client = SatochipCommandSet(channel: recorder, random: SeededRandom(seed: "client"))
        try client.select()
        try client.setup(pin: satochipPIN, puk: satochipPUK)
        try client.verifyPIN(satochipPIN)
        guard case .exchange(let bytes, _)? = recorder.transcript.entries.last else { Issue.record("no exchange"); return }
        let again = try card.transmit(try CommandAPDU(bytes: bytes))
        #expect(again.statusWord == StatusWord(0x9C22))
    }

    @Test func statusWordsMapToTypedErrorsAndUnknownOnesAreKept() throws {
        let cases: [(UInt16, SatochipError)] = [
            (0x63C2, .wrongPIN(triesLeft: 2)), (0x63E1, .wrongPIN(triesLeft: 33)), (0x9C0C, .pinBlocked), (0x9C06, .pinRequired(.verifyPIN)),
            (0x9C04, .setupNotDone(.verifyPIN)), (0x9C21, .secureChannelRequired(.verifyPIN)),
            (0x6D00, .instructionNotSupported(.verifyPIN)), (0x6A81, .status(StatusWord(0x6A81), .verifyPIN)),
            (0x6F42, .status(StatusWord(0x6F42), .verifyPIN)),
        ]
        for (sw, expected) in cases {
            let client = SatochipCommandSet(channel: ScriptedSatochip([ResponseAPDU(statusWord: StatusWord(sw))]))
            try client.select()
            #expect(throws: expected) { try client.verifyPIN(satochipPIN) }
            #expect(!expected.kind.isEmpty)
            #expect(!"\(expected)".contains("1234"))  // the PIN is never in the message
        }
    }

    /// Random, truncated, oversized and bit-flipped answers to every parsing command: never a crash, always a
    /// `SatochipError`.
    @Test func fuzzedAnswersGiveTypedErrors() throws {
        let random = SeededRandom(seed: "fuzz")
        let genuine = try makeReadySatochip(seed: "fuzz-genuine")
        try genuine.client.importSeed(SecretBytes([UInt8](repeating: 3, count: 32)))
        // Real answers to mutate.
        genuine.card.pinVerified = true
        var samples: [[UInt8]] = [try genuine.card.dispatch(CommandAPDU(cla: 0xB0, ins: 0x73))]
        samples.append(try genuine.card.getExtendedKey(CommandAPDU(cla: 0xB0, ins: 0x6D, p1: 1, data: [0x80, 0, 0, 0])))
        samples.append(try genuine.card.challengeResponse(CommandAPDU(cla: 0xB0, ins: 0x9A, data: [UInt8](repeating: 0, count: 32))))
        samples.append(Array(genuine.card.state.certificate.prefix(128)))

        func mutations(_ sample: [UInt8]) -> [[UInt8]] {
            var out: [[UInt8]] = [[], [0], Array(sample.prefix(sample.count / 2)), sample + random.bytes(300), random.bytes(Int(random.bytes(1)[0]))]
            for _ in 0..<20 {
                var flipped = sample
                if !flipped.isEmpty { flipped[Int(random.bytes(1)[0]) % flipped.count] ^= random.bytes(1)[0] | 1 }
                out.append(flipped)
            }
            return out
        }
        let operations: [(String, (SatochipCommandSet) throws -> Void)] = [
            ("authentikey", { _ = try $0.getAuthentikey() }),
            ("import seed", { _ = try $0.importSeed(SecretBytes([UInt8](repeating: 1, count: 32))) }),
            ("extended key", { _ = try $0.extendedPublicKey(at: try DerivationPath("m/44'/0'")) }),
            ("label", { _ = try $0.label() }),
            ("status", { _ = try $0.getStatus() }),
            ("sign", { _ = try $0.signHashRecoverable([UInt8](repeating: 9, count: 32), at: try DerivationPath("m/0")) }),
            ("certificate", { _ = try $0.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey]) }),
            ("secure channel", { _ = try $0.openSecureChannel() }),
        ]
        var attempts = 0
        for sample in samples {
            for mutated in mutations(sample) {
                for (name, operation) in operations {
                    for sw: UInt16 in [0x9000, 0x9000, 0x6A82] {
                        // The first answer is the mutated one, then genuine-looking ones so later parsers run too.
                        let channel = ScriptedSatochip([ResponseAPDU(data: mutated, statusWord: StatusWord(sw))]
                                                       + samples.map { ResponseAPDU(data: $0, statusWord: .success) })
                        if name == "status" { channel.status = mutated }
                        let client = SatochipCommandSet(channel: channel, random: SeededRandom(seed: "c"))
                        _ = try? client.select()
                        attempts += 1
                        do { try operation(client) } catch is SatochipError {} catch {
                            Issue.record("\(name): untyped error \(error)")
                        }
                    }
                }
            }
        }
        #expect(attempts > 1000)
    }

    @Test func encryptedAnswersThatAreMalformedGiveTypedErrors() throws {
        let sc = try SatochipSecureChannel(sharedX: [UInt8](repeating: 5, count: 32))
        _ = try sc.wrap(CommandAPDU(cla: 0xB0, ins: 0x3D, p2: 1), random: SeededRandom(seed: "x"))
        let random = SeededRandom(seed: "answers")
        for length in [1, 17, 18, 34, 35, 200, 600] {
            let answer = ResponseAPDU(data: random.bytes(length), statusWord: .success)
            #expect(throws: SatochipError.self) { try sc.unwrap(answer, for: .cardLabel) }
        }
    }

    @Test func hostileStateFilesAreRefused() throws {
        let fresh = try SoftSatochip(options: SoftSatochipOptions(randomSeed: Array("file".utf8))).state
        var bad = fresh
        bad.pinTries = 200
        #expect(bad.problem() == "field 'pinTries' is 200; expected 0 to 3")
        bad = fresh
        bad.label = [UInt8](repeating: 1, count: 65)
        #expect(bad.problem() != nil)
        bad = fresh
        bad.masterKey = [1]
        #expect(bad.problem() != nil)
        bad = fresh
        bad.pin = []
        #expect(bad.problem() != nil)
        #expect(fresh.problem() == nil)
    }
}
