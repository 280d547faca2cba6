/// An ISO 7816-4 status word (SW1 SW2). Unknown values are kept as they are, never collapsed.
public struct StatusWord: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(sw1: UInt8, sw2: UInt8) { rawValue = UInt16(sw1) << 8 | UInt16(sw2) }

    public var sw1: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 8) }
    public var sw2: UInt8 { UInt8(truncatingIfNeeded: rawValue) }

    // MARK: ISO 7816-4 values Keycard uses (`name` knows every word ISO 7816-4 defines by SW1 and SW2)
    public static let success = StatusWord(0x9000)
    /// 63Cx: verification failed, x tries left.
    public static let verificationFailedBase = StatusWord(0x63C0)
    public static let wrongLength = StatusWord(0x6700)
    public static let securityStatusNotSatisfied = StatusWord(0x6982)
    public static let authenticationMethodBlocked = StatusWord(0x6983)
    public static let conditionsNotSatisfied = StatusWord(0x6985)
    public static let wrongData = StatusWord(0x6A80)
    public static let functionNotSupported = StatusWord(0x6A81)
    public static let fileNotFound = StatusWord(0x6A82)
    /// "Not enough memory space in the file": Keycard's "no free pairing slot".
    public static let fileFull = StatusWord(0x6A84)
    public static let incorrectP1P2 = StatusWord(0x6A86)
    public static let referencedDataNotFound = StatusWord(0x6A88)
    public static let wrongP1P2 = StatusWord(0x6B00)
    public static let insNotSupported = StatusWord(0x6D00)
    public static let claNotSupported = StatusWord(0x6E00)
    public static let unknown = StatusWord(0x6F00)
    public static let dataInvalid = StatusWord(0x6984)

    /// 63Cx with `tries` (0...15) in the low nibble.
    public static func verificationFailed(triesLeft tries: Int) -> StatusWord {
        StatusWord(0x63C0 | UInt16(clamping: max(0, min(tries, 15))))
    }

    /// The tries count of a 63Cx word, or nil for any other word.
    public var triesLeft: Int? {
        rawValue & 0xFFF0 == 0x63C0 ? Int(rawValue & 0x000F) : nil
    }

    public var isSuccess: Bool { self == .success }

    /// ISO 7816-4 meaning, or nil when the word has no name here.
    public var name: String? {
        if let tries = triesLeft { return "verification failed, \(tries) tries left" }
        switch rawValue {
        case 0x9000: return "success"
        case 0x6200: return "warning, non-volatile memory unchanged"
        case 0x6281: return "part of returned data may be corrupted"
        case 0x6282: return "end of file or record reached before reading Ne bytes"
        case 0x6283: return "selected file deactivated"
        case 0x6284: return "file control information not formatted"
        case 0x6285: return "selected file in termination state"
        case 0x6286: return "no input data available from a sensor on the card"
        case 0x6300: return "warning, non-volatile memory changed"
        case 0x6381: return "file filled up by the last write"
        case 0x6400: return "execution error, non-volatile memory unchanged"
        case 0x6401: return "immediate response required by the card"
        case 0x6500: return "execution error, non-volatile memory changed"
        case 0x6581: return "memory failure"
        case 0x6600: return "security-related issue"
        case 0x6700: return "wrong length"
        case 0x6800: return "functions in CLA not supported"
        case 0x6881: return "logical channel not supported"
        case 0x6882: return "secure messaging not supported"
        case 0x6883: return "last command of the chain expected"
        case 0x6884: return "command chaining not supported"
        case 0x6900: return "command not allowed"
        case 0x6981: return "command incompatible with file structure"
        case 0x6982: return "security status not satisfied"
        case 0x6983: return "authentication method blocked"
        case 0x6984: return "reference data not usable"
        case 0x6985: return "conditions of use not satisfied"
        case 0x6986: return "command not allowed (no current EF)"
        case 0x6987: return "expected secure messaging data objects missing"
        case 0x6988: return "incorrect secure messaging data objects"
        case 0x6A00: return "wrong parameters P1-P2"
        case 0x6A80: return "incorrect parameters in the data field"
        case 0x6A81: return "function not supported"
        case 0x6A82: return "file or application not found"
        case 0x6A83: return "record not found"
        case 0x6A84: return "not enough memory space in the file"
        case 0x6A85: return "Nc inconsistent with TLV structure"
        case 0x6A86: return "incorrect parameters P1-P2"
        case 0x6A87: return "Nc inconsistent with parameters P1-P2"
        case 0x6A88: return "referenced data not found"
        case 0x6A89: return "file already exists"
        case 0x6A8A: return "DF name already exists"
        case 0x6B00: return "wrong parameters P1-P2"
        case 0x6D00: return "instruction code not supported"
        case 0x6E00: return "class not supported"
        case 0x6F00: return "no precise diagnosis"
        default: return nil
        }
    }

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return name.map { "\(padded) (\($0))" } ?? padded
    }

    /// Lets `case .wrongData:` match, and `case .verificationFailedBase:` match any 63Cx.
    public static func ~= (pattern: StatusWord, value: StatusWord) -> Bool {
        if pattern == .verificationFailedBase { return value.triesLeft != nil }
        return pattern == value
    }
}
