import CPCSCLite

#if canImport(Glibc)
import Glibc
#endif

/// Anything that moves raw APDU bytes to a card and back (a PC/SC connection, or a fake in tests).
public protocol APDUTransport: AnyObject {
    func transmit(bytes: [UInt8]) throws -> [UInt8]
}

/// What happens to the card when a connection ends.
public enum PCSCDisposition: Sendable {
    case leave, reset, unpower

    var rawValue: UInt32 {
        switch self {
        case .leave: return 0x0000   // SCARD_LEAVE_CARD
        case .reset: return 0x0001   // SCARD_RESET_CARD
        case .unpower: return 0x0002 // SCARD_UNPOWER_CARD
        }
    }
}

/// A connection to a card (SCARDHANDLE), disconnected (leaving the card as it is) in `deinit`.
/// Keeps its context alive. Not for concurrent use.
public final class PCSCCard: APDUTransport {
    public let context: PCSCContext
    public let reader: String
    public let mode: PCSCShareMode
    private var handle: SCARDHANDLE
    private var connected = true
    /// The protocol the card and reader agreed on (`.t0` or `.t1`).
    public private(set) var activeProtocol: PCSCProtocols

    /// Receive buffer: the largest extended answer (65 536 data bytes + SW) with room to spare.
    static let receiveCapacity = 65_536 + 2 + 10

    init(context: PCSCContext, reader: String, mode: PCSCShareMode, protocols: PCSCProtocols) throws {
        self.context = context
        self.mode = mode
        self.reader = reader
        var card: SCARDHANDLE = 0
        var active: DWORD = 0
        let result = SCardConnect(context.handle, reader, DWORD(mode.rawValue), DWORD(protocols.rawValue), &card, &active)
        let code = PCSCResultCode(rawValue: UInt32(truncatingIfNeeded: result))
        if code == .unknownReader || code == .readerUnavailable {
            _ = try context.resolve(reader: reader)  // throws with the list of readers when the name is wrong
        }
        try pcscCheck(result, "SCardConnect(\(reader), \(mode), \(protocols))")
        handle = card
        activeProtocol = PCSCProtocols(rawValue: UInt32(truncatingIfNeeded: active))
    }

    deinit {
        if connected { _ = SCardDisconnect(handle, DWORD(PCSCDisposition.leave.rawValue)) }
    }

    /// Ends the connection; `deinit` does the same with `.leave`.
    public func disconnect(_ disposition: PCSCDisposition = .leave) throws {
        guard connected else { return }
        connected = false
        try pcscCheck(SCardDisconnect(handle, DWORD(disposition.rawValue)), "SCardDisconnect(\(reader))")
    }

    /// Re-establishes the connection after `.resetCard` (another application reset the card), optionally resetting it.
    public func reconnect(initialization: PCSCDisposition = .leave, protocols: PCSCProtocols = .any) throws {
        var active: DWORD = 0
        try pcscCheck(SCardReconnect(handle, DWORD(mode.rawValue), DWORD(protocols.rawValue), DWORD(initialization.rawValue), &active),
                      "SCardReconnect(\(reader))")
        activeProtocol = PCSCProtocols(rawValue: UInt32(truncatingIfNeeded: active))
    }

    /// The card's answer to reset.
    public func atr() throws -> [UInt8] {
        var atr = [UInt8](repeating: 0, count: 33)  // MAX_ATR_SIZE
        var atrLength = DWORD(atr.count)
        var state: DWORD = 0, proto: DWORD = 0
        var nameLength: DWORD = 0
        try pcscCheck(SCardStatus(handle, nil, &nameLength, &state, &proto, &atr, &atrLength), "SCardStatus(\(reader))")
        return Array(atr.prefix(Int(atrLength)))
    }

    /// Sends raw APDU bytes and returns the raw answer (data ‖ SW1 SW2).
    public func transmit(bytes: [UInt8]) throws -> [UInt8] {
        guard connected else { throw PCSCError(.invalidHandle, operation: "SCardTransmit(\(reader))", detail: "the connection was closed") }
        var answer = [UInt8](repeating: 0, count: PCSCCard.receiveCapacity)
        var answerLength = DWORD(answer.count)
        let result: LONG = withUnsafePointer(to: activeProtocol == .t0 ? g_rgSCardT0Pci : g_rgSCardT1Pci) { pci in
            SCardTransmit(handle, pci, bytes, DWORD(bytes.count), nil, &answer, &answerLength)
        }
        try pcscCheck(result, "SCardTransmit(\(reader))")
        return Array(answer.prefix(Int(answerLength)))
    }

    /// Begins a transaction: other applications wait until `endTransaction`.
    public func beginTransaction() throws { try pcscCheck(SCardBeginTransaction(handle), "SCardBeginTransaction(\(reader))") }

    public func endTransaction(_ disposition: PCSCDisposition = .leave) throws {
        try pcscCheck(SCardEndTransaction(handle, DWORD(disposition.rawValue)), "SCardEndTransaction(\(reader))")
    }
}
