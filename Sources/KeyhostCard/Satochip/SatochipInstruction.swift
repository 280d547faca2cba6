/// Satochip applet instruction bytes (CLA B0), as the applet's `CardEdge` names them.
public enum SatochipInstruction: UInt8, Sendable, CustomStringConvertible {
    case select = 0xA4
    case setup = 0x2A
    case verifyPIN = 0x42
    case changePIN = 0x44
    case unblockPIN = 0x46
    case logoutAll = 0x60
    case getStatus = 0x3C
    case cardLabel = 0x3D
    case importSeed = 0x6C
    case resetSeed = 0x77
    case getAuthentikey = 0x73
    case getExtendedKey = 0x6D
    case signMessage = 0x6E
    case signTransactionHash = 0x7A
    case exportAuthentikey = 0xAD
    case exportPKIPubkey = 0x98
    case exportPKICertificate = 0x93
    case challengeResponsePKI = 0x9A
    case initSecureChannel = 0x81
    case processSecureChannel = 0x82

    public var description: String {
        switch self {
        case .select: return "SELECT"
        case .setup: return "SETUP"
        case .verifyPIN: return "VERIFY PIN"
        case .changePIN: return "CHANGE PIN"
        case .unblockPIN: return "UNBLOCK PIN"
        case .logoutAll: return "LOGOUT ALL"
        case .getStatus: return "GET STATUS"
        case .cardLabel: return "CARD LABEL"
        case .importSeed: return "BIP32 IMPORT SEED"
        case .resetSeed: return "BIP32 RESET SEED"
        case .getAuthentikey: return "BIP32 GET AUTHENTIKEY"
        case .getExtendedKey: return "BIP32 GET EXTENDED KEY"
        case .signMessage: return "SIGN MESSAGE"
        case .signTransactionHash: return "SIGN TRANSACTION HASH"
        case .exportAuthentikey: return "EXPORT AUTHENTIKEY"
        case .exportPKIPubkey: return "EXPORT PKI PUBKEY"
        case .exportPKICertificate: return "EXPORT PKI CERTIFICATE"
        case .challengeResponsePKI: return "CHALLENGE RESPONSE PKI"
        case .initSecureChannel: return "INIT SECURE CHANNEL"
        case .processSecureChannel: return "PROCESS SECURE CHANNEL"
        }
    }
}

/// Constants of the Satochip applet.
public enum Satochip {
    /// Every applet command but SELECT uses this class byte.
    public static let cla: UInt8 = 0xB0
    /// "SatoChip".
    public static let aid: [UInt8] = Array("SatoChip".utf8)
    /// The PIN SETUP expects before the owner's are set ("Muscle00").
    public static let defaultPIN: [UInt8] = Array("Muscle00".utf8)
    /// PINs and PUKs are 4...16 bytes.
    public static let pinLengths = 4...16
    /// The applet derives at most 10 levels below the master.
    public static let maxDepth = 10
    /// Labels are at most 64 bytes.
    public static let maxLabelLength = 64
}
