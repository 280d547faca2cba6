import KeyhostCard
import Testing
@testable import KeyhostPCSC

/// A card reader that answers from a script and records what it was sent.
final class ScriptedTransport: APDUTransport {
    var answers: [[UInt8]]
    var sent: [[UInt8]] = []

    init(_ answers: [[UInt8]]) { self.answers = answers }

    func transmit(bytes: [UInt8]) throws -> [UInt8] {
        sent.append(bytes)
        guard !answers.isEmpty else { throw PCSCError(.removedCard, operation: "SCardTransmit(fake)") }
        return answers.removeFirst()
    }
}

@Suite struct PCSCCardChannelTests {
    let select = CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, data: [0xA0, 0x00, 0x00, 0x08, 0x04, 0x00, 0x01, 0x01])

    @Test func plainAnswerPassesThrough() throws {
        let fake = ScriptedTransport([[0x01, 0x02, 0x90, 0x00]])
        let response = try PCSCCardChannel(transport: fake).transmit(select)
        #expect(response == ResponseAPDU(data: [0x01, 0x02], statusWord: .success))
        #expect(fake.sent == [try select.encoded()])
    }

    @Test func getResponseChainsUntilDone() throws {
        let fake = ScriptedTransport([
            [0x61, 0x03],
            [0x0A, 0x0B, 0x0C, 0x61, 0x00],
            Array(repeating: 0x55, count: 256) + [0x61, 0x02],
            [0x0D, 0x0E, 0x6A, 0x82],
        ])
        let response = try PCSCCardChannel(transport: fake).transmit(CommandAPDU(cla: 0x80, ins: 0xF2))
        #expect(response.data == [0x0A, 0x0B, 0x0C] + Array(repeating: 0x55, count: 256) + [0x0D, 0x0E])
        #expect(response.statusWord == .fileNotFound)  // the last answer's status word is the result
        #expect(fake.sent == [
            [0x80, 0xF2, 0x00, 0x00],
            [0x00, 0xC0, 0x00, 0x00, 0x03],  // proprietary CLA 80 → GET RESPONSE with CLA 00
            [0x00, 0xC0, 0x00, 0x00, 0x00],  // 6100: Le 256
            [0x00, 0xC0, 0x00, 0x00, 0x02],
        ])
    }

    @Test func getResponseKeepsLogicalChannel() throws {
        let fake = ScriptedTransport([[0x61, 0x01], [0x42, 0x90, 0x00]])
        _ = try PCSCCardChannel(transport: fake).transmit(CommandAPDU(cla: 0x03, ins: 0xCA, p1: 0x9F, p2: 0x7F, le: 256))
        #expect(fake.sent.last == [0x03, 0xC0, 0x00, 0x00, 0x01])
        #expect(PCSCCardChannel.getResponseCLA(for: 0x00) == 0x00)
        #expect(PCSCCardChannel.getResponseCLA(for: 0x0C) == 0x00)  // secure messaging bits dropped
        #expect(PCSCCardChannel.getResponseCLA(for: 0x45) == 0x45)  // further inter-industry: channel 5
        #expect(PCSCCardChannel.getResponseCLA(for: 0x80) == 0x00)
    }

    @Test func wrongLengthIsResentWithExactLe() throws {
        let fake = ScriptedTransport([[0x6C, 0x04], [0x01, 0x02, 0x03, 0x04, 0x90, 0x00]])
        let command = CommandAPDU(cla: 0x00, ins: 0xB0, le: 256)
        let response = try PCSCCardChannel(transport: fake).transmit(command)
        #expect(response.data == [0x01, 0x02, 0x03, 0x04])
        #expect(fake.sent == [[0x00, 0xB0, 0x00, 0x00, 0x00], [0x00, 0xB0, 0x00, 0x00, 0x04]])
    }

    @Test func wrongLengthThenMoreData() throws {
        let fake = ScriptedTransport([[0x6C, 0x02], [0xAA, 0xBB, 0x61, 0x01], [0xCC, 0x90, 0x00]])
        let response = try PCSCCardChannel(transport: fake).transmit(CommandAPDU(cla: 0x00, ins: 0xB0, le: 1))
        #expect(response.data == [0xAA, 0xBB, 0xCC] && response.statusWord == .success)
        #expect(fake.sent.count == 3)
    }

    @Test func switchedOffReturnsRawAnswers() throws {
        let options = PCSCCardChannel.Options(automaticGetResponse: false, correctWrongLength: false)
        let fake = ScriptedTransport([[0x61, 0x10], [0x6C, 0x08]])
        let channel = PCSCCardChannel(transport: fake, options: options)
        #expect(try channel.transmit(select).statusWord == StatusWord(0x6110))
        #expect(try channel.transmit(select).statusWord == StatusWord(0x6C08))
        #expect(fake.sent.count == 2)
    }

    @Test func endlessMoreDataIsCutOff() throws {
        let fake = ScriptedTransport(Array(repeating: [0x00, 0x61, 0x01], count: 10))
        let channel = PCSCCardChannel(transport: fake, options: .init(maxGetResponses: 4))
        #expect(throws: PCSCChannelError.tooManyGetResponses(4)) { try channel.transmit(select) }
        #expect(fake.sent.count == 5)
    }

    @Test func extendedCommandGoesOutExtended() throws {
        let data = [UInt8](repeating: 0x5A, count: 300)
        let fake = ScriptedTransport([Array(repeating: 0x11, count: 1000) + [0x90, 0x00]])
        let response = try PCSCCardChannel(transport: fake).transmit(CommandAPDU(cla: 0x80, ins: 0xE2, data: data, le: 65_536))
        #expect(response.data.count == 1000)
        #expect(Array(fake.sent[0].prefix(7)) == [0x80, 0xE2, 0x00, 0x00, 0x00, 0x01, 0x2C])
        #expect(Array(fake.sent[0].suffix(2)) == [0x00, 0x00])
        #expect(fake.sent[0].count == 4 + 3 + 300 + 2)
    }

    @Test func shortAnswersAreRejected() {
        let fake = ScriptedTransport([[0x90]])
        #expect(throws: APDUError.truncated(1, needed: 2)) { try PCSCCardChannel(transport: fake).transmit(select) }
    }

    @Test func transportErrorsPassThroughTyped() {
        let fake = ScriptedTransport([])
        #expect(throws: PCSCError(.removedCard, operation: "SCardTransmit(fake)")) {
            try PCSCCardChannel(transport: fake).transmit(select)
        }
    }

    @Test func worksUnderTheKeycardClient() throws {
        // SELECT of a pre-initialisation 3.x card through the channel, answer split by the card with 61xx.
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v3_2, randomSeed: [1]))
        let full = try soft.transmit(select).encoded
        let body = Array(full.dropLast(2))
        let fake = ScriptedTransport([Array(body.prefix(20)) + [0x61, UInt8(body.count - 20)], Array(body.dropFirst(20)) + [0x90, 0x00]])
        let info = try KeycardCommandSet(channel: PCSCCardChannel(transport: fake)).select()
        #expect(!info.isInitialized)
        #expect(info.secureChannelPublicKey?.uncompressed.count == 65)
    }
}
