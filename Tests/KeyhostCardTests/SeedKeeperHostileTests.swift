import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// A SeedKeeper that answers SELECT and GET STATUS as a set-up card without secure channel, and every other
/// command with the next scripted answer.
final class ScriptedSeedKeeper: CardChannel {
    var answers: [ResponseAPDU]
    init(_ answers: [ResponseAPDU]) { self.answers = answers }

    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        if apdu.ins == 0xA4 { return ResponseAPDU(statusWord: .success) }
        if apdu.ins == 0x3C { return ResponseAPDU(data: [0, 2, 0, 1, 3, 3, 0, 0, 0, 1, 1, 0, 0], statusWord: .success) }
        guard !answers.isEmpty else { return ResponseAPDU(statusWord: StatusWord(0x6F00)) }
        return answers.removeFirst()
    }
}

@Suite struct SeedKeeperHostileTests {
    @Test func aFlippedSecureChannelByteIsRefusedAndNothingIsStored() throws {
        let card = try SoftSeedKeeper(options: SoftSeedKeeperOptions(randomSeed: Array("tamper".utf8)))
        let wire = TamperingChannel(card)
        let client = SeedKeeperCommandSet(channel: wire, random: SeededRandom(seed: "client"))
        try client.select()
        try client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK)
        try client.session.verifyPIN(seedKeeperPIN)
        for index in [3, 20, 40] {
            wire.flipAt = index
            #expect(throws: SeedKeeperError.secureChannelRejected(.importSecret, StatusWord(0x9C23))) {
                try client.importSecret(SecretBytes([1, 2, 3]), type: .data, exportRights: .plainAllowed, label: "x")
            }
            #expect(!client.session.isSecureChannelOpen)
        }
        // The PIN stays verified (the channel is not the session) and no secret was made.
        try client.session.openSecureChannel()
        #expect(try client.listSecretHeaders().isEmpty)
    }

    @Test func aTamperedExportFailsTheFingerprintOrTheSignature() throws {
        let pair = try makeReadySeedKeeper()
        let id = try pair.client.importSecret(SecretBytes(Array("secret".utf8)), type: .password, exportRights: .plainAllowed, label: "").id
        // The stored bytes change behind the fingerprint's back (a corrupt card): the card signs what it sends,
        // the fingerprint no longer matches.
        pair.card.state.secrets[0].secret[0] ^= 1
        #expect(throws: SeedKeeperError.fingerprintMismatch(id: id, expected: sha256Fingerprint(Array("secret".utf8)),
                                                            actual: sha256Fingerprint(Array("recret".utf8)))) {
            try pair.client.exportSecret(id: id)
        }
        // A signature by another key is refused.
        pair.card.state.secrets[0].secret[0] ^= 1
        pair.client.session.authentikey = PrivateKey.generate().publicKey
        #expect(throws: SeedKeeperError.invalidResponse(.exportSecret, "the exported secret is not signed by the card's authentikey")) {
            try pair.client.exportSecret(id: id)
        }
    }

    @Test func statusWordsMapToTypedErrors() throws {
        let cases: [(UInt16, SeedKeeperError)] = [
            (0x9C06, .pinRequired(.resetSecret)), (0x9C04, .setupNotDone(.resetSecret)), (0x9C08, .secretNotFound(id: 5)),
            (0x9C01, .noMemoryLeft(.resetSecret)), (0x9C30, .lockError(.resetSecret)), (0x6D00, .instructionNotSupported(.resetSecret)),
            (0x9C23, .secureChannelRejected(.resetSecret, StatusWord(0x9C23))), (0x6A81, .status(StatusWord(0x6A81), .resetSecret)),
        ]
        for (sw, expected) in cases {
            let client = SeedKeeperCommandSet(channel: ScriptedSeedKeeper([ResponseAPDU(statusWord: StatusWord(sw))]))
            try client.select()
            #expect(throws: expected) { try client.resetSecret(id: 5) }
            #expect(!expected.kind.isEmpty)
        }
    }

    /// Random, truncated, oversized and bit-flipped answers to every SeedKeeper command: never a crash, always a
    /// typed error (`SeedKeeperError`, or `SatochipError` from the shared session).
    @Test func fuzzedAnswersGiveTypedErrors() throws {
        let random = SeededRandom(seed: "fuzz")
        let genuine = try makeReadySeedKeeper(seed: "fuzz-genuine")
        let id = try genuine.client.importSecret(SecretBytes([UInt8](repeating: 5, count: 150)), type: .data, exportRights: .plainAllowed, label: "l").id
        genuine.card.pinVerified = true
        var samples: [[UInt8]] = [try genuine.card.seedKeeperStatus()]
        samples.append(try genuine.card.listSecretHeaders(CommandAPDU(cla: 0xB0, ins: 0xA6, p2: 1)))
        samples.append(try genuine.card.exportSecret(CommandAPDU(cla: 0xB0, ins: 0xA2, p1: 1, p2: 1, data: [0, UInt8(id)])))
        samples.append(try genuine.card.exportSecret(CommandAPDU(cla: 0xB0, ins: 0xA2, p1: 1, p2: 2, data: [0, UInt8(id)])))
        samples.append(try genuine.card.exportSecret(CommandAPDU(cla: 0xB0, ins: 0xA2, p1: 1, p2: 2, data: [0, UInt8(id)])))
        samples.append(try genuine.card.printLogs(CommandAPDU(cla: 0xB0, ins: 0xA9, p2: 1)))
        samples.append(try genuine.card.printLogs(CommandAPDU(cla: 0xB0, ins: 0xA9, p2: 2)))
        samples.append([0, 7, 1, 2, 3, 4])

        func mutations(_ sample: [UInt8]) -> [[UInt8]] {
            var out: [[UInt8]] = [[], [0], [0, 0], Array(sample.prefix(sample.count / 2)), sample + random.bytes(300), random.bytes(Int(random.bytes(1)[0]))]
            for _ in 0..<12 {
                var flipped = sample
                if !flipped.isEmpty { flipped[Int(random.bytes(1)[0]) % flipped.count] ^= random.bytes(1)[0] | 1 }
                out.append(flipped)
            }
            return out
        }
        let authentikey = try genuine.client.session.getAuthentikey()
        let operations: [(String, (SeedKeeperCommandSet) throws -> Void)] = [
            ("status", { _ = try $0.seedKeeperStatus() }),
            ("list", { _ = try $0.listSecretHeaders() }),
            ("import", { _ = try $0.importSecret(SecretBytes([1, 2, 3]), type: .data, exportRights: .plainAllowed, label: "") }),
            ("export", { _ = try $0.exportSecret(id: 0) }),
            ("generate", { _ = try $0.generateMasterSeed(size: 32, exportRights: .plainAllowed, label: "") }),
            ("reset", { try $0.resetSecret(id: 0) }),
            ("logs", { _ = try $0.logs() }),
        ]
        var attempts = 0
        for sample in samples {
            for mutated in mutations(sample) {
                for (name, operation) in operations {
                    for sw: UInt16 in [0x9000, 0x9000, 0x9C12] {
                        // The mutated answer first, then genuine ones so the later parsers of multi-step commands run too.
                        let channel = ScriptedSeedKeeper([ResponseAPDU(data: mutated, statusWord: StatusWord(sw))]
                                                         + samples.map { ResponseAPDU(data: $0, statusWord: .success) })
                        let client = SeedKeeperCommandSet(channel: channel, random: SeededRandom(seed: "c"))
                        _ = try? client.select()
                        client.session.authentikey = authentikey
                        attempts += 1
                        do { try operation(client) } catch is SeedKeeperError {} catch is SatochipError {} catch {
                            Issue.record("\(name): untyped error \(error)")
                        }
                    }
                }
            }
        }
        #expect(attempts > 1000)
    }

    @Test func anEndlessListingOrLogIsCutOff() throws {
        let header = ResponseAPDU(data: [0, 1, 0x90, 1, 1, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0], statusWord: .success)
        let endless = ScriptedSeedKeeper(Array(repeating: header, count: 600))
        let client = SeedKeeperCommandSet(channel: endless)
        try client.select()
        #expect(throws: SeedKeeperError.invalidResponse(.listSecretHeaders, "more than 512 secrets listed")) { try client.listSecretHeaders() }
        let logs = ScriptedSeedKeeper([ResponseAPDU(data: [0, 1, 0, 100], statusWord: .success)]
                                      + Array(repeating: ResponseAPDU(data: [UInt8](repeating: 1, count: 7), statusWord: .success), count: 200))
        let logClient = SeedKeeperCommandSet(channel: logs)
        try logClient.select()
        #expect(throws: SeedKeeperError.self) { try logClient.logs() }
    }
}
