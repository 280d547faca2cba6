/// A PC/SC result code (pcsc-lite `LONG`, kept as its 32-bit pattern). Unknown codes are kept, never collapsed.
public struct PCSCResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static let success = PCSCResultCode(0x0000_0000)
    public static let internalError = PCSCResultCode(0x8010_0001)
    public static let cancelled = PCSCResultCode(0x8010_0002)
    public static let invalidHandle = PCSCResultCode(0x8010_0003)
    public static let invalidParameter = PCSCResultCode(0x8010_0004)
    public static let invalidTarget = PCSCResultCode(0x8010_0005)
    public static let noMemory = PCSCResultCode(0x8010_0006)
    public static let insufficientBuffer = PCSCResultCode(0x8010_0008)
    public static let unknownReader = PCSCResultCode(0x8010_0009)
    public static let timeout = PCSCResultCode(0x8010_000A)
    public static let sharingViolation = PCSCResultCode(0x8010_000B)
    public static let noSmartcard = PCSCResultCode(0x8010_000C)
    public static let unknownCard = PCSCResultCode(0x8010_000D)
    public static let protocolMismatch = PCSCResultCode(0x8010_000F)
    public static let notReady = PCSCResultCode(0x8010_0010)
    public static let invalidValue = PCSCResultCode(0x8010_0011)
    public static let systemCancelled = PCSCResultCode(0x8010_0012)
    public static let communicationError = PCSCResultCode(0x8010_0013)
    public static let unknownError = PCSCResultCode(0x8010_0014)
    public static let invalidATR = PCSCResultCode(0x8010_0015)
    public static let notTransacted = PCSCResultCode(0x8010_0016)
    public static let readerUnavailable = PCSCResultCode(0x8010_0017)
    public static let pciTooSmall = PCSCResultCode(0x8010_0019)
    public static let readerUnsupported = PCSCResultCode(0x8010_001A)
    public static let duplicateReader = PCSCResultCode(0x8010_001B)
    public static let cardUnsupported = PCSCResultCode(0x8010_001C)
    /// SCARD_E_NO_SERVICE: pcscd is not running (or its socket is not reachable).
    public static let noService = PCSCResultCode(0x8010_001D)
    public static let serviceStopped = PCSCResultCode(0x8010_001E)
    public static let unexpected = PCSCResultCode(0x8010_001F)
    public static let noReadersAvailable = PCSCResultCode(0x8010_002E)
    public static let unsupportedCard = PCSCResultCode(0x8010_0065)
    public static let unresponsiveCard = PCSCResultCode(0x8010_0066)
    public static let unpoweredCard = PCSCResultCode(0x8010_0067)
    public static let resetCard = PCSCResultCode(0x8010_0068)
    public static let removedCard = PCSCResultCode(0x8010_0069)

    /// The pcsc-lite name of the code (SCARD_E_…, SCARD_W_…), or nil for codes this table lacks.
    public var name: String? {
        switch self {
        case .success: return "SCARD_S_SUCCESS"
        case .internalError: return "SCARD_F_INTERNAL_ERROR"
        case .cancelled: return "SCARD_E_CANCELLED"
        case .invalidHandle: return "SCARD_E_INVALID_HANDLE"
        case .invalidParameter: return "SCARD_E_INVALID_PARAMETER"
        case .invalidTarget: return "SCARD_E_INVALID_TARGET"
        case .noMemory: return "SCARD_E_NO_MEMORY"
        case .insufficientBuffer: return "SCARD_E_INSUFFICIENT_BUFFER"
        case .unknownReader: return "SCARD_E_UNKNOWN_READER"
        case .timeout: return "SCARD_E_TIMEOUT"
        case .sharingViolation: return "SCARD_E_SHARING_VIOLATION"
        case .noSmartcard: return "SCARD_E_NO_SMARTCARD"
        case .unknownCard: return "SCARD_E_UNKNOWN_CARD"
        case .protocolMismatch: return "SCARD_E_PROTO_MISMATCH"
        case .notReady: return "SCARD_E_NOT_READY"
        case .invalidValue: return "SCARD_E_INVALID_VALUE"
        case .systemCancelled: return "SCARD_E_SYSTEM_CANCELLED"
        case .communicationError: return "SCARD_F_COMM_ERROR"
        case .unknownError: return "SCARD_F_UNKNOWN_ERROR"
        case .invalidATR: return "SCARD_E_INVALID_ATR"
        case .notTransacted: return "SCARD_E_NOT_TRANSACTED"
        case .readerUnavailable: return "SCARD_E_READER_UNAVAILABLE"
        case .pciTooSmall: return "SCARD_E_PCI_TOO_SMALL"
        case .readerUnsupported: return "SCARD_E_READER_UNSUPPORTED"
        case .duplicateReader: return "SCARD_E_DUPLICATE_READER"
        case .cardUnsupported: return "SCARD_E_CARD_UNSUPPORTED"
        case .noService: return "SCARD_E_NO_SERVICE"
        case .serviceStopped: return "SCARD_E_SERVICE_STOPPED"
        case .unexpected: return "SCARD_E_UNEXPECTED"
        case .noReadersAvailable: return "SCARD_E_NO_READERS_AVAILABLE"
        case .unsupportedCard: return "SCARD_W_UNSUPPORTED_CARD"
        case .unresponsiveCard: return "SCARD_W_UNRESPONSIVE_CARD"
        case .unpoweredCard: return "SCARD_W_UNPOWERED_CARD"
        case .resetCard: return "SCARD_W_RESET_CARD"
        case .removedCard: return "SCARD_W_REMOVED_CARD"
        default: return nil
        }
    }

    public var hex: String {
        let digits = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    public var description: String { name.map { "\($0) (\(hex))" } ?? hex }

    /// Lets `case .noService:` match in a switch over codes.
    public static func ~= (pattern: PCSCResultCode, value: PCSCResultCode) -> Bool { pattern == value }
}

/// A PC/SC call that failed, or a reader/card that is not there. Says what happened and what to do.
public struct PCSCError: Error, Equatable, CustomStringConvertible {
    /// The result code (for failures keyhost detects itself, e.g. an unknown reader name, the matching code).
    public var code: PCSCResultCode
    /// The operation, e.g. "SCardConnect(Virtual PCD 00 00)".
    public var operation: String
    /// Extra detail keyhost adds (the readers present, the timeout).
    public var detail: String?

    public init(_ code: PCSCResultCode, operation: String, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// What went wrong and what to do about it, in words.
    public var advice: String {
        switch code {
        case .noService, .serviceStopped:
            return "the PC/SC daemon pcscd is not running; start it (for the virtual reader: scripts/virtual-reader start)"
        case .noReadersAvailable:
            return "no smart card reader is connected; plug one in (or start the virtual reader: scripts/virtual-reader start)"
        case .unknownReader, .readerUnavailable:
            return "the reader is not available; check the name with 'keyhost card list'"
        case .noSmartcard:
            return "no card is in the reader; insert one (or serve a software card: keyhost card serve --vpcd)"
        case .removedCard:
            return "the card was removed; insert it again and retry"
        case .resetCard:
            return "the card was reset by another application; reconnect and select the applet again"
        case .unpoweredCard, .unresponsiveCard:
            return "the card does not answer; remove it and insert it again"
        case .sharingViolation:
            return "another application holds the card exclusively; close it, or connect in shared mode"
        case .timeout:
            return "timed out waiting for the card"
        case .protocolMismatch:
            return "the card does not speak the requested protocol (T=0/T=1)"
        case .cancelled, .systemCancelled:
            return "the operation was cancelled"
        case .insufficientBuffer:
            return "the card's answer is longer than the receive buffer"
        default:
            return "PC/SC call failed"
        }
    }

    public var description: String {
        var text = "\(operation): \(advice) [\(code)]"
        if let detail { text += "; \(detail)" }
        return text
    }

    /// Matches on the code: `catch let e as PCSCError where e == .noService` reads as `case PCSCError.noService`.
    public static func ~= (pattern: PCSCResultCode, value: PCSCError) -> Bool { pattern == value.code }
}

/// The one checking helper for pcsc-lite's `LONG` result convention: throws a `PCSCError` naming `operation`.
@inline(__always)
func pcscCheck<R: BinaryInteger>(_ result: R, _ operation: @autoclosure () -> String) throws {
    let code = PCSCResultCode(rawValue: UInt32(truncatingIfNeeded: result))
    guard code == .success else { throw PCSCError(code, operation: operation()) }
}
