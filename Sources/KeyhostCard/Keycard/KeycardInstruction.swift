/// A Keycard instruction byte (INS), with the applet's names. Unknown values are kept.
public struct KeycardInstruction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let select = KeycardInstruction(rawValue: 0xA4)
    public static let initialize = KeycardInstruction(rawValue: 0xFE)
    public static let getStatus = KeycardInstruction(rawValue: 0xF2)
    public static let factoryReset = KeycardInstruction(rawValue: 0xFD)
    public static let verifyPIN = KeycardInstruction(rawValue: 0x20)
    public static let changePIN = KeycardInstruction(rawValue: 0x21)
    public static let unblockPIN = KeycardInstruction(rawValue: 0x22)
    public static let loadKey = KeycardInstruction(rawValue: 0xD0)
    public static let deriveKey = KeycardInstruction(rawValue: 0xD1)
    public static let generateMnemonic = KeycardInstruction(rawValue: 0xD2)
    public static let removeKey = KeycardInstruction(rawValue: 0xD3)
    public static let generateKey = KeycardInstruction(rawValue: 0xD4)
    public static let sign = KeycardInstruction(rawValue: 0xC0)
    public static let setPinlessPath = KeycardInstruction(rawValue: 0xC1)
    public static let exportKey = KeycardInstruction(rawValue: 0xC2)
    public static let exportBIP85 = KeycardInstruction(rawValue: 0xC4)
    public static let ecdh = KeycardInstruction(rawValue: 0xC5)
    public static let getData = KeycardInstruction(rawValue: 0xCA)
    public static let storeData = KeycardInstruction(rawValue: 0xE2)
    public static let getChallenge = KeycardInstruction(rawValue: 0x84)
    public static let openSecureChannel = KeycardInstruction(rawValue: 0x10)
    public static let mutuallyAuthenticate = KeycardInstruction(rawValue: 0x11)
    public static let pair = KeycardInstruction(rawValue: 0x12)
    public static let unpair = KeycardInstruction(rawValue: 0x13)
    public static let identifyCard = KeycardInstruction(rawValue: 0x14)
    /// Secure channel v2 carrier of every encrypted command.
    public static let securedAPDU = KeycardInstruction(rawValue: 0x18)

    public var name: String? {
        switch rawValue {
        case 0xA4: return "SELECT"
        case 0xFE: return "INIT"
        case 0xF2: return "GET STATUS"
        case 0xFD: return "FACTORY RESET"
        case 0x20: return "VERIFY PIN"
        case 0x21: return "CHANGE PIN"
        case 0x22: return "UNBLOCK PIN"
        case 0xD0: return "LOAD KEY"
        case 0xD1: return "DERIVE KEY"
        case 0xD2: return "GENERATE MNEMONIC"
        case 0xD3: return "REMOVE KEY"
        case 0xD4: return "GENERATE KEY"
        case 0xC0: return "SIGN"
        case 0xC1: return "SET PINLESS PATH"
        case 0xC2: return "EXPORT KEY"
        case 0xC4: return "EXPORT BIP85"
        case 0xC5: return "ECDH"
        case 0xCA: return "GET DATA"
        case 0xE2: return "STORE DATA"
        case 0x84: return "GET CHALLENGE"
        case 0x10: return "OPEN SECURE CHANNEL"
        case 0x11: return "MUTUALLY AUTHENTICATE"
        case 0x12: return "PAIR"
        case 0x13: return "UNPAIR"
        case 0x14: return "IDENTIFY CARD"
        case 0x18: return "SECURED APDU"
        default: return nil
        }
    }

    public var description: String { name ?? "INS \(byteHex(rawValue))" }
}

/// Keycard's class byte and application identifier.
public enum Keycard {
    /// CLA of every applet command.
    public static let cla: UInt8 = 0x80
    /// The applet instance AID.
    public static let instanceAID: [UInt8] = [0xA0, 0x00, 0x00, 0x08, 0x04, 0x00, 0x01, 0x01, 0x01]
    /// PIN and PUK sizes, in digits.
    public static let pinLength = 6
    public static let pukLength = 12
    /// EIP-1581 prefix m/43'/60'/1581': the only paths whose private keys the applet exports.
    public static let eip1581Prefix: [UInt32] = [0x8000_002B, 0x8000_003C, 0x8000_062D]
}
