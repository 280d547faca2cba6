import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// Every command whose command or answer data is secret, traced as a wire APDU (`KEYHOST_TRACE=apdu`) and as a
/// decrypted secure-channel exchange (`apdu,plaintext`): the secret bytes never show, the header does.
@Suite struct APDURedactionTests {
    struct Case: CustomStringConvertible, Sendable {
        let name: String
        let command: CommandAPDU
        let response: ResponseAPDU
        /// Bytes that must not appear in the trace (the secret part of the command or of the answer).
        let secret: [UInt8]
        var description: String { name }
    }

    /// A byte pattern that occurs nowhere else in a trace line.
    static func secret(_ count: Int, _ seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 37) ^ 0xA5 } }

    static let ok = StatusWord(0x9000)
    static let pin = Array("246813".utf8), puk = Array("864209753124".utf8)

    static func command(_ name: String, cla: UInt8 = 0x80, ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8]) -> Case {
        Case(name: name, command: CommandAPDU(cla: cla, ins: ins, p1: p1, p2: p2, data: data), response: ResponseAPDU(statusWord: ok), secret: data)
    }

    static func answer(_ name: String, cla: UInt8 = 0x80, ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], answer: [UInt8]) -> Case {
        Case(name: name, command: CommandAPDU(cla: cla, ins: ins, p1: p1, p2: p2, data: data),
             response: ResponseAPDU(data: answer, statusWord: ok), secret: answer)
    }

    static let path = [0x80, 0, 0, 0x2B, 0x80, 0, 0, 0x3C, 0x80, 0, 0x06, 0x2D, 0, 0, 0, 0] as [UInt8]

    static let cases: [Case] = [
        // ISO 7816-4, any CLA (the applet ignores CLA; other applets use these too).
        command("ISO VERIFY 00 20", cla: 0x00, ins: 0x20, p2: 0x81, data: pin),
        command("ISO VERIFY odd 00 21", cla: 0x00, ins: 0x21, p2: 0x81, data: [0x81, 6] + pin),
        command("ISO CHANGE REFERENCE DATA", cla: 0x00, ins: 0x24, p2: 0x81, data: pin + Array("135790".utf8)),
        command("ISO RESET RETRY COUNTER", cla: 0x00, ins: 0x2C, p2: 0x81, data: puk + pin),
        command("VERIFY with a proprietary CLA", cla: 0x84, ins: 0x20, data: pin),
        // Keycard commands with secret command data.
        command("VERIFY PIN", ins: 0x20, data: pin),
        command("CHANGE PIN", ins: 0x21, data: pin),
        command("CHANGE PUK", ins: 0x21, p1: 1, data: puk),
        command("CHANGE PAIRING SECRET", ins: 0x21, p1: 2, data: secret(32, 1)),
        command("UNBLOCK PIN", ins: 0x22, data: puk + pin),
        command("INIT", ins: 0xFE, data: [0x41] + secret(65 + 16 + 48, 2)),
        command("PAIR step 1", ins: 0x12, data: secret(32, 3)),
        command("LOAD KEY seed", ins: 0xD0, p1: 3, data: secret(64, 4)),
        command("LOAD KEY key pair", ins: 0xD0, p1: 1, data: [0xA1, 0x22, 0x81, 0x20] + secret(32, 5)),
        command("LOAD KEY with CLA 00", cla: 0x00, ins: 0xD0, p1: 3, data: secret(64, 6)),
        // Keycard commands with a secret answer.
        answer("PAIR step 1 answer", ins: 0x12, data: secret(32, 7), answer: secret(64, 8)),
        answer("PAIR step 2 answer", ins: 0x12, p1: 1, data: secret(32, 9), answer: [1] + secret(32, 10)),
        answer("GENERATE MNEMONIC", ins: 0xD2, p1: 4, answer: [0x00, 0x00, 0x07, 0xFF, 0x03, 0x21, 0x05, 0x5A, 0x01, 0x10, 0x06, 0x66,
                                                                 0x02, 0x22, 0x04, 0x44, 0x00, 0x01, 0x07, 0x77, 0x03, 0x33, 0x01, 0x99]),
        answer("GENERATE MNEMONIC with CLA 00", cla: 0x00, ins: 0xD2, p1: 8, answer: secret(48, 11)),
        answer("EXPORT KEY private", ins: 0xC2, p1: 1, p2: 0, data: path, answer: [0xA1, 0x22, 0x81, 0x20] + secret(32, 12)),
        answer("EXPORT KEY unknown P2", ins: 0xC2, p1: 1, p2: 3, data: path, answer: [0xA1, 0x22, 0x81, 0x20] + secret(32, 13)),
        answer("EXPORT LEE", ins: 0xC3, data: path, answer: [0xA1, 0x64] + secret(100, 14)),
        answer("EXPORT BIP85", ins: 0xC4, p1: 32, data: path, answer: secret(32, 15)),
        answer("ECDH", ins: 0xC5, p1: 1, data: [0x04] + secret(64, 16).map { $0 ^ 0xFF } + path, answer: secret(32, 17)),
        // Other applets reached with s:transmit.
        answer("PSO DECIPHER", cla: 0x00, ins: 0x2A, p1: 0x80, p2: 0x86, data: [0x00] + secret(16, 18).map { $0 ^ 0x0F }, answer: secret(32, 19)),
        command("PSO ENCIPHER", cla: 0x00, ins: 0x2A, p1: 0x86, p2: 0x80, data: secret(32, 20)),
        command("GlobalPlatform PUT KEY", cla: 0x84, ins: 0xD8, p1: 0, p2: 0x81, data: secret(48, 21)),
        command("PUT DATA odd (key import)", cla: 0x00, ins: 0xDB, p1: 0x3F, p2: 0xFF, data: [0x4D, 0x20] + secret(30, 22)),
    ]

    /// Upper-case hex without separators, so a secret is found however the trace spaces or cases it.
    static func normalised(_ text: String) -> String {
        String(text.uppercased().filter { $0.isHexDigit })
    }

    final class FixedCard: CardChannel {
        let response: ResponseAPDU
        init(_ response: ResponseAPDU) { self.response = response }
        func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU { response }
    }

    @Test(arguments: cases)
    func wireTraceHidesTheSecret(_ c: Case) throws {
        var lines: [String] = []
        let tracer = TracingChannel(FixedCard(c.response), showsPlaintext: false) { lines.append($0) }
        _ = try tracer.transmit(c.command)
        check(lines, c)
    }

    @Test(arguments: cases)
    func plaintextTraceHidesTheSecret(_ c: Case) {
        var lines: [String] = []
        let tracer = TracingChannel(FixedCard(c.response), showsPlaintext: true) { lines.append($0) }
        tracer.plaintext(command: c.command, response: c.response)
        check(lines, c)
        #expect(lines.allSatisfy { $0.hasPrefix("   plaintext ") })
    }

    func check(_ lines: [String], _ c: Case) {
        let text = lines.joined(separator: "\n")
        let header = TracingChannel.spaced([c.command.cla, c.command.ins, c.command.p1, c.command.p2])
        #expect(text.contains(header), "\(c.name): header \(header) missing in \(text)")
        #expect(text.contains("redacted"), "\(c.name): \(text)")
        #expect(!Self.normalised(text).contains(Hex.encode(c.secret).uppercased()), "\(c.name): \(text)")
        // Not even a 6-byte window of the secret shows.
        for start in stride(from: 0, to: max(1, c.secret.count - 5), by: 1) {
            let window = Array(c.secret[start..<min(c.secret.count, start + 6)])
            #expect(!Self.normalised(text).contains(Hex.encode(window).uppercased()), "\(c.name): bytes \(start)… in \(text)")
        }
    }

    /// Public data keeps showing: redaction is by what the data is, not wholesale.
    @Test func publicDataStillShows() throws {
        let shown: [(CommandAPDU, ResponseAPDU)] = [
            (CommandAPDU(cla: 0x80, ins: 0xC2, p1: 1, p2: 1, data: Self.path), ResponseAPDU(data: [0xA1, 0x43, 0x80, 0x41, 0x04, 0xAB], statusWord: Self.ok)),
            (CommandAPDU(cla: 0x80, ins: 0xC2, p1: 1, p2: 2, data: Self.path), ResponseAPDU(data: [0xA1, 0x43, 0x80, 0x41, 0x04, 0xAB], statusWord: Self.ok)),
            (CommandAPDU(cla: 0x80, ins: 0xC0, p1: 0, data: [UInt8](repeating: 0x11, count: 32)), ResponseAPDU(data: [0xA0, 0x01, 0x02], statusWord: Self.ok)),
            (CommandAPDU(cla: 0x00, ins: 0xA4, p1: 4, data: Keycard.instanceAID), ResponseAPDU(data: [0xA4, 0x01, 0x02], statusWord: Self.ok)),
            (CommandAPDU(cla: 0x80, ins: 0xF2, p1: 0), ResponseAPDU(data: [0xA3, 0x09, 0x02], statusWord: Self.ok)),
            (CommandAPDU(cla: 0x00, ins: 0x2A, p1: 0x9E, p2: 0x9A, data: [0x22, 0x33]), ResponseAPDU(data: [0x44, 0x55], statusWord: Self.ok)),
        ]
        for (command, response) in shown {
            var lines: [String] = []
            let tracer = TracingChannel(FixedCard(response), showsPlaintext: true) { lines.append($0) }
            _ = try tracer.transmit(command)
            #expect(!lines.joined().contains("redacted"), "\(lines)")
            #expect(lines.joined().contains(TracingChannel.spaced(response.data)))
        }
    }

    /// A replay that does not match names the command without its PIN.
    @Test func replayMismatchHidesThePIN() throws {
        let recorded = try CommandAPDU(cla: 0x00, ins: 0x20, p2: 0x81, data: Array("111111".utf8)).encoded()
        let replay = ReplayChannel(Transcript(entries: [.exchange(command: recorded, response: ResponseAPDU(statusWord: Self.ok))]))
        do {
            _ = try replay.transmit(CommandAPDU(cla: 0x00, ins: 0x20, p2: 0x81, data: Self.pin))
            Issue.record("expected a mismatch")
        } catch {
            let text = Self.normalised("\(error)")
            #expect(!text.contains(Hex.encode(Self.pin).uppercased()))
            #expect(!text.contains(Hex.encode(Array("111111".utf8)).uppercased()))
            #expect("\(error)".contains("00200081 [6 bytes redacted]"))
        }
    }
}
