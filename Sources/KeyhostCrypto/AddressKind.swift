/// The kinds of single-key address keyhost derives.
public enum AddressKind: String, CaseIterable, Sendable {
    /// Legacy pay-to-public-key-hash (Base58Check, BIP44).
    case p2pkh
    /// P2WPKH nested in P2SH (Base58Check, BIP49).
    case p2shP2wpkh = "p2sh-p2wpkh"
    /// Native segwit v0 (Bech32, BIP84).
    case p2wpkh
    /// Taproot key path with no script tree (Bech32m, BIP86).
    case p2tr
    /// Ethereum-style: last 20 bytes of Keccak-256 of the uncompressed key, EIP-55 checksummed.
    case ethereum

    /// The BIP43 purpose that standard wallets use for this kind.
    public var purpose: UInt32 {
        switch self {
        case .p2pkh, .ethereum: return 44
        case .p2shP2wpkh: return 49
        case .p2wpkh: return 84
        case .p2tr: return 86
        }
    }

    /// Parses names such as "p2wpkh", "p2sh-p2wpkh", "segwit", "taproot", "legacy", "eth".
    public init?(name: String) {
        switch name.lowercased() {
        case "p2pkh", "legacy", "pkh": self = .p2pkh
        case "p2sh-p2wpkh", "p2sh_p2wpkh", "p2shp2wpkh", "nested-segwit", "sh-wpkh", "wrapped-segwit": self = .p2shP2wpkh
        case "p2wpkh", "segwit", "native-segwit", "wpkh", "bech32": self = .p2wpkh
        case "p2tr", "taproot", "tr", "bech32m": self = .p2tr
        case "ethereum", "eth", "evm": self = .ethereum
        default: return nil
        }
    }
}

/// Version bytes and prefixes of one family of BIP32 extended keys (SLIP-132).
public struct ExtendedKeyVersion: Hashable, Sendable, CustomStringConvertible {
    /// Base58 prefix of the public form, e.g. "zpub".
    public let publicPrefix: String
    /// Base58 prefix of the private form, e.g. "zprv".
    public let privatePrefix: String
    /// 4-byte version of the public form.
    public let publicVersion: UInt32
    /// 4-byte version of the private form.
    public let privateVersion: UInt32
    /// The address kind wallets associate with this family (for multisig families, the single-key analogue).
    public let kind: AddressKind
    /// Whether the family is for a test network.
    public let isTestnet: Bool
    /// Whether the family is a SLIP-132 multisig family (Ypub, Zpub, ...).
    public let isMultisig: Bool

    public static let xpub = ExtendedKeyVersion("xpub", "xprv", 0x0488_B21E, 0x0488_ADE4, .p2pkh, testnet: false)
    public static let ypub = ExtendedKeyVersion("ypub", "yprv", 0x049D_7CB2, 0x049D_7878, .p2shP2wpkh, testnet: false)
    public static let zpub = ExtendedKeyVersion("zpub", "zprv", 0x04B2_4746, 0x04B2_430C, .p2wpkh, testnet: false)
    public static let Ypub = ExtendedKeyVersion("Ypub", "Yprv", 0x0295_B43F, 0x0295_B005, .p2shP2wpkh, testnet: false, multisig: true)
    public static let Zpub = ExtendedKeyVersion("Zpub", "Zprv", 0x02AA_7ED3, 0x02AA_7A99, .p2wpkh, testnet: false, multisig: true)
    public static let tpub = ExtendedKeyVersion("tpub", "tprv", 0x0435_87CF, 0x0435_8394, .p2pkh, testnet: true)
    public static let upub = ExtendedKeyVersion("upub", "uprv", 0x044A_5262, 0x044A_4E28, .p2shP2wpkh, testnet: true)
    public static let vpub = ExtendedKeyVersion("vpub", "vprv", 0x045F_1CF6, 0x045F_18BC, .p2wpkh, testnet: true)
    public static let Upub = ExtendedKeyVersion("Upub", "Uprv", 0x0242_89EF, 0x0242_85B5, .p2shP2wpkh, testnet: true, multisig: true)
    public static let Vpub = ExtendedKeyVersion("Vpub", "Vprv", 0x0257_5483, 0x0257_5048, .p2wpkh, testnet: true, multisig: true)
    /// Litecoin's own BIP44 prefixes (Ltub/Ltpv); Litecoin wallets also accept xpub.
    public static let Ltub = ExtendedKeyVersion("Ltub", "Ltpv", 0x019D_A462, 0x019D_9CFE, .p2pkh, testnet: false)
    /// Litecoin testnet's BIP44 prefixes (ttub/ttpv).
    public static let ttub = ExtendedKeyVersion("ttub", "ttpv", 0x0436_F6E1, 0x0436_EF7D, .p2pkh, testnet: true)
    /// Dogecoin's BIP44 prefixes (dgub/dgpv).
    public static let dgub = ExtendedKeyVersion("dgub", "dgpv", 0x02FA_CAFD, 0x02FA_C398, .p2pkh, testnet: false)

    /// Every family keyhost recognises when parsing.
    public static let all: [ExtendedKeyVersion] = [.xpub, .ypub, .zpub, .Ypub, .Zpub, .tpub, .upub, .vpub, .Upub, .Vpub, .Ltub, .ttub, .dgub]

    /// The family whose public or private version is `version`, and which of the two it is.
    public static func lookup(version: UInt32) -> (family: ExtendedKeyVersion, isPrivate: Bool)? {
        for family in all {
            if family.publicVersion == version { return (family, false) }
            if family.privateVersion == version { return (family, true) }
        }
        return nil
    }

    /// The family with public or private prefix `prefix` (e.g. "zpub" or "zprv").
    public static func lookup(prefix: String) -> ExtendedKeyVersion? {
        all.first { $0.publicPrefix == prefix || $0.privatePrefix == prefix }
    }

    init(_ pub: String, _ prv: String, _ pubVersion: UInt32, _ prvVersion: UInt32, _ kind: AddressKind,
         testnet: Bool, multisig: Bool = false) {
        publicPrefix = pub
        privatePrefix = prv
        publicVersion = pubVersion
        privateVersion = prvVersion
        self.kind = kind
        isTestnet = testnet
        isMultisig = multisig
    }

    /// The public prefix, e.g. "zpub".
    public var description: String { publicPrefix }
}
