import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostCard

/// The NDEF file through GET DATA and STORE DATA as KeycardApplet defines them (tags 3.2 and master): a 512-byte file,
/// a 2-byte length then the message, stored from byte P2 × 4; read whole from its start on 3.2 (at most 223 bytes),
/// in segments from byte P2 × 4 on 4.0. Public and cash data keep at most 127 bytes each.
@Suite struct NDEFDataTests {
    /// `count` bytes that differ from one position (and one message) to the next.
    static func message(_ count: Int, _ salt: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) ^ salt } }

    static func isUnsupportedRead(_ error: Error) -> Bool {
        if case .unsupportedForm(.getData, _, _)? = error as? KeycardError { return true }
        return false
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func messagesRoundTripThroughTheFile(_ version: AppletVersion) throws {
        let pair = try makeReadyCard(version)
        let card = pair.client
        // A blank file: its length reads 0.
        #expect(try card.getData(slot: .ndef) == [0, 0])
        #expect(try card.readNDEF() == [])
        for count in [0, 1, 30, 218, 219, 221, 222, 300, 510] {
            let message = Self.message(count, UInt8(count & 0xFF))
            try card.writeNDEF(message)
            let file = pair.soft.state.ndefFile ?? []
            #expect(Array(file.prefix(2 + count)) == [UInt8(count >> 8), UInt8(count & 0xFF)] + message, "\(count) bytes")
            if version == .v4_0 || count + 2 <= 223 {
                #expect(try card.readNDEF() == message, "\(count) bytes")
            } else {
                // 3.2 answers the file's first 223 bytes only: the rest is refused, never cut off silently.
                #expect { try card.readNDEF() } throws: { Self.isUnsupportedRead($0) }
                #expect(try card.getData(slot: .ndef) == Array(file.prefix(223)))
            }
        }
        #expect(throws: KeycardError.self) { try card.writeNDEF(Self.message(511, 1)) }
        #expect(pair.soft.state.ndefFile?.count == 512)

        // Public and cash data: 127 bytes at most, the applet's buffers.
        try card.storeData(Self.message(127, 9), slot: .cash)
        #expect(try card.getData(slot: .cash) == Self.message(127, 9))
        #expect(throws: KeycardError.wrongData(.storeData)) { try card.storeData(Self.message(128, 9), slot: .cash) }
        #expect(try card.getData(slot: .publicData) == [])
    }

    /// 4.0 answers GET DATA of the NDEF file past its end with 6A86, as KeycardApplet.getData does.
    @Test func offsetsPastTheFileAreRefusedOn4() throws {
        let pair = try makeReadyCard(.v4_0)
        try pair.client.writeNDEF(Self.message(10, 3))
        #expect(throws: KeycardError.incorrectParameters(.getData, .incorrectP1P2)) {
            try pair.client.sendSecure(.getData, p1: DataSlot.ndef.rawValue, p2: 3)  // byte 12, the end of a 12-byte file
        }
    }

    /// A message longer than one command is written with its length last: a failure midway leaves a file that reads as
    /// an empty message, never the start of a new message glued to the rest of the old one.
    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func aWriteCutShortLeavesAnEmptyMessage(_ version: AppletVersion) throws {
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: version, randomSeed: Array("cut".utf8)))
        let channel = CutChannel(soft)
        let card = KeycardCommandSet(channel: channel, random: SeededRandom(seed: "client-cut"), trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        let v1 = try card.select().secureChannelVersion == .v1
        try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: v1 ? PairingSecret.derive(password: testPairingPassword) : nil)
        try card.select()
        if v1 { try card.pair(password: testPairingPassword) }
        try card.openSecureChannel()
        try card.verifyPIN(testPIN)

        let old = Self.message(400, 0x55)
        try card.writeNDEF(old)
        channel.failAfter = 1  // the first segment goes through, the second is lost
        #expect(throws: CardChannelError.connectionLost) { try card.writeNDEF(Self.message(400, 0xAA)) }
        let file = soft.state.ndefFile ?? []
        #expect(Array(file.prefix(2)) == [0, 0], "the length is written last")
        #expect(Array(file[2..<220]) == Array(Self.message(400, 0xAA).prefix(218)))
    }
}

/// Passes commands to the card until `failAfter` more have gone through, then loses the connection.
private final class CutChannel: CardChannel {
    let base: CardChannel
    var failAfter: Int?

    init(_ base: CardChannel) { self.base = base }

    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        if let left = failAfter {
            if left == 0 { throw CardChannelError.connectionLost }
            failAfter = left - 1
        }
        return try base.transmit(apdu)
    }
}
