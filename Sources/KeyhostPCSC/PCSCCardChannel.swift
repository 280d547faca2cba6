import KeyhostCard

/// A `CardChannel` over raw APDU bytes (normally a `PCSCCard`), doing what the transport layer of
/// ISO 7816-4 asks of the terminal:
/// - `61xx` (more data available): GET RESPONSE with Le = xx (00 = 256), repeated, answers concatenated;
/// - `6Cxx` (wrong Le, exact length xx): the same command re-sent once with Le = xx.
/// Both can be switched off to see the card's raw answers. Extended-length commands go as they are.
public final class PCSCCardChannel: CardChannel {
    public struct Options: Sendable {
        /// Fetch the rest of the answer on 61xx.
        public var automaticGetResponse: Bool
        /// Re-send with the corrected Le on 6Cxx.
        public var correctWrongLength: Bool
        /// Give up after this many GET RESPONSE rounds (a card that never stops answering 61xx).
        public var maxGetResponses: Int

        public init(automaticGetResponse: Bool = true, correctWrongLength: Bool = true, maxGetResponses: Int = 256) {
            self.automaticGetResponse = automaticGetResponse
            self.correctWrongLength = correctWrongLength
            self.maxGetResponses = maxGetResponses
        }
    }

    public let transport: APDUTransport
    public var options: Options

    public init(transport: APDUTransport, options: Options = Options()) {
        self.transport = transport
        self.options = options
    }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        var response = try exchange(apdu)
        guard options.automaticGetResponse else { return response }
        var data = response.data
        var rounds = 0
        while response.statusWord.sw1 == 0x61 {
            rounds += 1
            guard rounds <= options.maxGetResponses else { throw PCSCChannelError.tooManyGetResponses(options.maxGetResponses) }
            let le = response.statusWord.sw2 == 0 ? 256 : Int(response.statusWord.sw2)
            response = try exchange(CommandAPDU(cla: PCSCCardChannel.getResponseCLA(for: apdu.cla), ins: 0xC0, le: le))
            data += response.data
        }
        return ResponseAPDU(data: data, statusWord: response.statusWord)
    }

    /// One command, re-sent once with the exact Le when the card answers 6Cxx.
    private func exchange(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        let response = try ResponseAPDU(bytes: try transport.transmit(bytes: try apdu.encoded()))
        guard options.correctWrongLength, response.statusWord.sw1 == 0x6C else { return response }
        var corrected = apdu
        corrected.le = response.statusWord.sw2 == 0 ? 256 : Int(response.statusWord.sw2)
        return try ResponseAPDU(bytes: try transport.transmit(bytes: try corrected.encoded()))
    }

    /// GET RESPONSE is an inter-industry command: CLA 00 with the logical channel of the original command kept
    /// (first inter-industry range, bits 1-2); a proprietary CLA (bit 8 set, e.g. Keycard's 80) falls back to 00.
    static func getResponseCLA(for cla: UInt8) -> UInt8 {
        if cla & 0x80 != 0 { return 0x00 }
        if cla & 0x40 != 0 { return cla & 0x4F }  // further inter-industry range: channels 4-19 in bits 1-4
        return cla & 0x03
    }
}

/// Failures of the ISO 7816 transport logic (the PC/SC calls throw `PCSCError`).
public enum PCSCChannelError: Error, Equatable, CustomStringConvertible {
    case tooManyGetResponses(Int)

    public var description: String {
        switch self {
        case .tooManyGetResponses(let n): return "the card still answered 61xx (more data) after \(n) GET RESPONSE commands"
        }
    }
}

extension PCSCCard {
    /// A `CardChannel` over this connection, with automatic GET RESPONSE and Le correction.
    public func channel(options: PCSCCardChannel.Options = .init()) -> PCSCCardChannel {
        PCSCCardChannel(transport: self, options: options)
    }
}
