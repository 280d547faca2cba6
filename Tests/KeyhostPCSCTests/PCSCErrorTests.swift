import Testing
@testable import KeyhostPCSC

@Suite struct PCSCErrorTests {
    /// Every failure a user meets names its pcsc-lite code and says what to do.
    @Test(arguments: [
        (PCSCResultCode.noService, "SCARD_E_NO_SERVICE", "pcscd is not running"),
        (.noReadersAvailable, "SCARD_E_NO_READERS_AVAILABLE", "no smart card reader"),
        (.unknownReader, "SCARD_E_UNKNOWN_READER", "keyhost card list"),
        (.noSmartcard, "SCARD_E_NO_SMARTCARD", "no card is in the reader"),
        (.removedCard, "SCARD_W_REMOVED_CARD", "card was removed"),
        (.resetCard, "SCARD_W_RESET_CARD", "reset by another application"),
        (.sharingViolation, "SCARD_E_SHARING_VIOLATION", "exclusively"),
        (.timeout, "SCARD_E_TIMEOUT", "timed out"),
        (.unpoweredCard, "SCARD_W_UNPOWERED_CARD", "does not answer"),
    ])
    func namedCodesGiveAdvice(code: PCSCResultCode, name: String, advice: String) {
        let error = PCSCError(code, operation: "SCardConnect(Virtual PCD 00 00)")
        #expect(code.name == name)
        #expect(error.description.hasPrefix("SCardConnect(Virtual PCD 00 00): "))
        #expect(error.description.contains(advice))
        #expect(error.description.contains(name))
    }

    @Test func rawValuesMatchPCSCLite() {
        #expect(PCSCResultCode.noService.rawValue == 0x8010_001D)
        #expect(PCSCResultCode.noSmartcard.rawValue == 0x8010_000C)
        #expect(PCSCResultCode.removedCard.rawValue == 0x8010_0069)
        #expect(PCSCResultCode.noService.description == "SCARD_E_NO_SERVICE (0x8010001D)")
    }

    @Test func unknownCodesAreKept() {
        let code = PCSCResultCode(0x8010_0099)
        #expect(code.name == nil)
        #expect(code.description == "0x80100099")
        let error = PCSCError(code, operation: "SCardTransmit(r)")
        #expect(error.code.rawValue == 0x8010_0099)
        #expect(error.description.contains("0x80100099"))
    }

    @Test func checkHelperMapsLONGResults() throws {
        try pcscCheck(0, "SCardEstablishContext")
        // pcsc-lite's LONG is 64-bit on Linux: the code arrives as a positive Int.
        #expect(throws: PCSCError(.noService, operation: "SCardEstablishContext")) {
            try pcscCheck(Int(0x8010_001D), "SCardEstablishContext")
        }
        // and as a negative Int32 where LONG is 32-bit.
        #expect(throws: PCSCError(.timeout, operation: "SCardGetStatusChange")) {
            try pcscCheck(Int32(bitPattern: 0x8010_000A), "SCardGetStatusChange")
        }
    }

    @Test func patternMatching() {
        let error = PCSCError(.sharingViolation, operation: "SCardConnect(r)")
        switch error {
        case PCSCResultCode.noService: Issue.record("wrong match")
        case PCSCResultCode.sharingViolation: break
        default: Issue.record("no match")
        }
    }

    @Test func detailIsAppended() {
        let error = PCSCError(.unknownReader, operation: "finding reader \"x\"", detail: "readers: \"Virtual PCD 00 00\"")
        #expect(error.description.hasSuffix("; readers: \"Virtual PCD 00 00\""))
    }

    @Test func multiStringSplitting() {
        let chars: [CChar] = Array("A 00\u{0}B 01\u{0}\u{0}".utf8).map { CChar(bitPattern: $0) }
        #expect(PCSCContext.splitMultiString(chars) == ["A 00", "B 01"])
        #expect(PCSCContext.splitMultiString([0]) == [])
        #expect(PCSCContext.splitMultiString([]) == [])
    }

    @Test func protocolsAndModes() {
        #expect(PCSCProtocols.any.rawValue == 0x3)
        #expect(PCSCShareMode.exclusive.rawValue == 0x1 && PCSCShareMode.shared.rawValue == 0x2)
        #expect("\(PCSCProtocols.t1)" == "T=1")
    }
}
