import Testing
import KeyhostCrypto
@testable import KeyhostCard

@Suite struct APDUTests {
    @Test func shortEncodings() throws {
        #expect(try CommandAPDU(cla: 0x80, ins: 0xF2).encoded() == [0x80, 0xF2, 0, 0])
        #expect(try CommandAPDU(cla: 0x80, ins: 0x50, p1: 1, p2: 2, data: hex("84762336c5187fe8")).encoded() == hex("805001020884762336c5187fe8"))
        #expect(try CommandAPDU(cla: 0x80, ins: 0x50, p1: 1, p2: 2, data: hex("84762336c5187fe8"), le: 0x77).encoded() == hex("805001020884762336c5187fe877"))
        #expect(try CommandAPDU(cla: 0, ins: 0xB0, le: 256).encoded() == hex("00b0000000"))
        #expect(!CommandAPDU(cla: 0, ins: 0xB0, data: [UInt8](repeating: 1, count: 255), le: 256).isExtended)
    }

    @Test func extendedEncodings() throws {
        let data = [UInt8](repeating: 0xAB, count: 300)
        let apdu = CommandAPDU(cla: 0x80, ins: 0xE2, data: data)
        #expect(apdu.isExtended)
        let bytes = try apdu.encoded()
        #expect(Array(bytes[0..<7]) == [0x80, 0xE2, 0, 0, 0x00, 0x01, 0x2C])
        #expect(bytes.count == 7 + 300)
        // Case 2 extended: 00 Le-hi Le-lo; 65 536 is 00 00.
        #expect(try CommandAPDU(cla: 0, ins: 0xB0, le: 65_536).encoded() == hex("00b0000000" + "0000"))
        #expect(try CommandAPDU(cla: 0, ins: 0xB0, le: 1000).encoded() == hex("00b00000" + "0003e8"))
        // Case 4 extended: Lc 3 bytes, Le 2 bytes.
        #expect(try CommandAPDU(cla: 0, ins: 0xB0, data: [1, 2], le: 257).encoded() == hex("00b00000" + "000002" + "0102" + "0101"))
        #expect(try CommandAPDU(cla: 0, ins: 0xB0, data: [1], forceExtended: true).encoded() == hex("00b00000" + "000001" + "01"))
        #expect(throws: APDUError.dataTooLong(65_536, maximum: 65_535)) {
            try CommandAPDU(cla: 0, ins: 0, data: [UInt8](repeating: 0, count: 65_536)).encoded()
        }
    }

    @Test(arguments: [
        CommandAPDU(cla: 0x80, ins: 0xF2),
        CommandAPDU(cla: 0x80, ins: 0xF2, le: 256),
        CommandAPDU(cla: 0x80, ins: 0x20, data: Array("123456".utf8)),
        CommandAPDU(cla: 0x80, ins: 0x20, data: [9], le: 12),
        CommandAPDU(cla: 0x80, ins: 0xE2, data: [UInt8](repeating: 7, count: 400), le: 65_536),
        CommandAPDU(cla: 0x80, ins: 0xE2, data: [UInt8](repeating: 7, count: 4000)),
        CommandAPDU(cla: 0x80, ins: 0xCA, le: 4096),
    ])
    func parseRoundTrip(_ apdu: CommandAPDU) throws {
        let parsed = try CommandAPDU(bytes: apdu.encoded())
        #expect(parsed.data == apdu.data)
        #expect(parsed.le == apdu.le)
        #expect(try parsed.encoded() == apdu.encoded())
    }

    @Test func malformedCommands() {
        #expect(throws: APDUError.self) { try CommandAPDU(bytes: [0x80, 0x20]) }
        #expect(throws: APDUError.self) { try CommandAPDU(bytes: hex("8020000005010203")) }
        #expect(throws: APDUError.self) { try CommandAPDU(bytes: hex("80200000000005010203")) }
    }

    @Test func responses() throws {
        let r = try ResponseAPDU(bytes: hex("01029000"))
        #expect(r.data == [1, 2])
        #expect(r.statusWord == .success)
        #expect(r.encoded == hex("01029000"))
        #expect(throws: APDUError.truncated(1, needed: 2)) { try ResponseAPDU(bytes: [0x90]) }
    }

    @Test func statusWords() {
        let sw = StatusWord(sw1: 0x63, sw2: 0xC2)
        #expect(sw.triesLeft == 2)
        #expect(sw.description == "63C2 (verification failed, 2 tries left)")
        var matched = ""
        switch sw {
        case .success: matched = "success"
        case .verificationFailedBase: matched = "63Cx"
        default: matched = "other"
        }
        #expect(matched == "63Cx")
        switch StatusWord(0x6A84) {
        case .fileFull: matched = "full"
        default: matched = "other"
        }
        #expect(matched == "full")
        let unknown = StatusWord(0x6F42)
        #expect(unknown.rawValue == 0x6F42 && unknown.name == nil && unknown.description == "6F42")
        #expect(KeycardError.from(unknown, instruction: .sign) == .status(unknown, .sign))
        #expect(KeycardError.from(StatusWord(0x63C1), instruction: .verifyPIN) == .wrongPIN(triesLeft: 1))
        #expect(KeycardError.from(StatusWord(0x63C0), instruction: .verifyPIN) == .pinBlocked)
        #expect(KeycardError.from(StatusWord(0x63C0), instruction: .unblockPIN) == .pukBlocked)
        #expect(KeycardError.from(.fileFull, instruction: .pair) == .noFreePairingSlot)
    }
}

@Suite struct TLVTests {
    @Test func lengthForms() throws {
        #expect(TLV.encodeLength(0x7F) == [0x7F])
        #expect(TLV.encodeLength(0x80) == [0x81, 0x80])
        #expect(TLV.encodeLength(0xFF) == [0x81, 0xFF])
        #expect(TLV.encodeLength(0x100) == [0x82, 0x01, 0x00])
        #expect(TLV.encodeLength(0xFFFF) == [0x82, 0xFF, 0xFF])
        #expect(TLV.encodeLength(0x10000) == [0x83, 0x01, 0x00, 0x00])
    }

    @Test(arguments: [0, 1, 127, 128, 200, 255, 256, 1000, 65_535, 70_000])
    func roundTrip(length: Int) throws {
        let tlv = TLV(tag: 0x80, value: (0..<length).map { UInt8(truncatingIfNeeded: $0) })
        #expect(try TLV.parseAll(tlv.encoded()) == [tlv])
    }

    @Test func widenedLengths() throws {
        // 82 FF FF must read as 65 535, not as a UInt8 shifted into zero.
        let header = try TLV.parseHeader([0x80, 0x82, 0xFF, 0xFF], at: 0)
        #expect(header.length == 65_535 && header.valueOffset == 4)
        let h81 = try TLV.parseHeader([0x80, 0x81, 0xC8], at: 0)
        #expect(h81.length == 200)
        #expect(throws: TLVError.valueTruncated(tag: 0x80, declared: 65_535, available: 0)) { try TLV.parseAll([0x80, 0x82, 0xFF, 0xFF]) }
        #expect(throws: TLVError.unsupportedLengthForm(0x80, offset: 1)) { try TLV.parseAll([0x80, 0x80]) }
        #expect(throws: TLVError.truncatedHeader(offset: 0)) { try TLV.parseAll([0x80, 0x82, 0x01]) }
    }

    @Test func nestedAndMultiByteTags() throws {
        let inner = [TLV(tag: 0x80, value: [1, 2]), TLV(tag: 0x5F20, value: [3])]
        let outer = TLV(tag: 0xA1, children: inner)
        #expect(outer.isConstructed)
        #expect(outer.encoded() == hex("a108800201025f200103"))
        #expect(try TLV.parseAll(outer.encoded()).first?.children() == inner)
    }

    /// The applet's SIGN answer uses `A0 81 len` even for short templates.
    @Test func signTemplateWithLongFormLength() throws {
        let key = PrivateKey.generate()
        let digest = Hash.sha256(Array("msg".utf8))
        let der = try key.sign(digest: digest).der
        let body = TLV(tag: 0x80, value: key.publicKey.uncompressed).encoded() + der
        let answer = [0xA0, 0x81, UInt8(body.count)] + body
        let sig = try KeycardSignature(response: answer, digest: digest)
        #expect(sig.publicKey == key.publicKey)
        #expect(try sig.signature.recoverPublicKey(digest: digest) == key.publicKey)
        // The 65-byte r ‖ s ‖ v form.
        let recoverable = try key.signRecoverable(digest: digest)
        let raw = try KeycardSignature(response: TLV(tag: 0x80, value: recoverable.r + recoverable.s + [UInt8(recoverable.recoveryID)]).encoded(), digest: digest)
        #expect(raw.publicKey == key.publicKey && raw.signature == recoverable)
    }
}
