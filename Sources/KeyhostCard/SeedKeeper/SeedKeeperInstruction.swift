import KeyhostCrypto

/// SeedKeeper's own instruction bytes (CLA B0); the session instructions it shares with Satochip are
/// `SatochipInstruction`s.
public enum SeedKeeperInstruction: UInt8, Sendable, CustomStringConvertible {
    case generateMasterSeed = 0xA0
    case importSecret = 0xA1
    case exportSecret = 0xA2
    case resetSecret = 0xA5
    case listSecretHeaders = 0xA6
    case getSeedKeeperStatus = 0xA7
    case printLogs = 0xA9
    /// BIP32 GET EXTENDED KEY from a master seed secret (SeedKeeper 0.2).
    case getExtendedKey = 0x6D

    public var description: String {
        switch self {
        case .generateMasterSeed: return "GENERATE MASTERSEED"
        case .importSecret: return "IMPORT SECRET"
        case .exportSecret: return "EXPORT SECRET"
        case .resetSecret: return "RESET SECRET"
        case .listSecretHeaders: return "LIST SECRET HEADERS"
        case .getSeedKeeperStatus: return "GET SEEDKEEPER STATUS"
        case .printLogs: return "PRINT LOGS"
        case .getExtendedKey: return "BIP32 GET EXTENDED KEY"
        }
    }
}

/// Constants of the SeedKeeper applet (`Toporin/Seedkeeper-Applet`, protocol 0.2).
public enum SeedKeeper {
    /// "SeedKeeper".
    public static let aid: [UInt8] = CardFamily.seedkeeper.aid
    /// Secret labels are at most 127 bytes.
    public static let maxLabelLength = 127
    /// GENERATE MASTERSEED draws 16...64 bytes.
    public static let masterSeedSizes = 16...64
    /// Secrets go to and from the card in chunks of 128 bytes.
    public static let chunkSize = 128
    /// The header every secret carries: type, origin, export rights, three counters, fingerprint, subtype, RFU,
    /// label size (the label follows).
    public static let headerSize = 13
    /// Multi-step commands' phases (P2).
    static let opInit: UInt8 = 0x01, opProcess: UInt8 = 0x02, opFinal: UInt8 = 0x03
}

/// What a secret is (the header's type byte), as pysatochip names them.
public struct SeedKeeperSecretType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let masterSeed = Self(rawValue: 0x10)
    public static let bip39Mnemonic = Self(rawValue: 0x30)
    public static let electrumMnemonic = Self(rawValue: 0x40)
    public static let privateKey = Self(rawValue: 0x60)
    public static let publicKey = Self(rawValue: 0x70)
    public static let key = Self(rawValue: 0x80)
    public static let password = Self(rawValue: 0x90)
    public static let masterPassword = Self(rawValue: 0x91)
    public static let certificate = Self(rawValue: 0xA0)
    public static let twoFactor = Self(rawValue: 0xB0)
    public static let data = Self(rawValue: 0xC0)
    public static let descriptor = Self(rawValue: 0xC1)

    public var description: String {
        let names: [UInt8: String] = [0x10: "Masterseed", 0x30: "BIP39 mnemonic", 0x31: "BIP39 mnemonic v2", 0x40: "Electrum mnemonic",
                                      0x60: "Private Key", 0x70: "Public Key", 0x80: "Secret Key", 0x90: "Password",
                                      0x91: "Master Password", 0xA0: "Authentikey certificate", 0xB0: "2FA secret",
                                      0xC0: "Data", 0xC1: "Descriptor"]
        return names[rawValue] ?? "type 0x\(Hex.encode([rawValue]))"
    }
}

/// How a secret may leave the card (the low two bits of the header's export byte).
public enum SeedKeeperExportRights: UInt8, Sendable, CaseIterable {
    case forbidden = 0x00
    /// In plain (through the secure channel) or encrypted to another card.
    case plainAllowed = 0x01
    /// Only encrypted to another card's authentikey.
    case encryptedOnly = 0x02
    /// Reserved: only to a certified authentikey.
    case authenticatedOnly = 0x03
}

/// Where a secret came from (the header's origin byte).
public enum SeedKeeperOrigin: UInt8, Sendable {
    case unknown = 0x00
    case plainImport = 0x01
    case encryptedImport = 0x02
    case generatedOnCard = 0x03
}
