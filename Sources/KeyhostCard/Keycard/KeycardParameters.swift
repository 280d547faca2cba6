/// Where a derivation path starts (DERIVE KEY, SIGN and EXPORT KEY P1 bits 7–8).
public enum DerivationSource: UInt8, Sendable {
    case master = 0x00
    case parent = 0x40
    case current = 0x80
    /// The PIN-less path (SIGN P1 03 sets it internally).
    case pinless = 0xC0
}

/// EXPORT KEY P2.
public enum ExportOption: UInt8, Sendable {
    /// Private key (only on EIP-1581 paths); the applet answers with tag 81 only.
    case privateAndPublic = 0x00
    case publicOnly = 0x01
    /// Public key and chain code (not on EIP-1581 paths).
    case extendedPublic = 0x02
}

/// LOAD KEY P1.
public enum LoadKeyType: UInt8, Sendable {
    case keyPair = 0x01
    case extendedKeyPair = 0x02
    case seed = 0x03
}

/// PAIR step-1 P2 (3.2 applet): which slot kind the card should use.
public enum PairingMode: UInt8, Sendable {
    /// A persistent slot if one is free, else the ephemeral slot.
    case any = 0x00
    case ephemeral = 0x01
    /// A persistent slot or SW 6A84.
    case persistent = 0x02
}

/// GET/STORE DATA P1: the same three on applets 3.2 and 4.0.
public enum DataSlot: UInt8, Sendable, CaseIterable {
    case publicData = 0x00
    /// The file the card's NDEF applet serves over NFC: a 2-byte length, then the NDEF message.
    case ndef = 0x01
    /// What the card's Cash applet answers at SELECT.
    case cash = 0x02

    /// The name both front ends use: "public", "ndef", "cash".
    public var name: String {
        switch self {
        case .publicData: return "public"
        case .ndef: return "ndef"
        case .cash: return "cash"
        }
    }

    /// The slot called `name`, nil for any other name.
    public init?(name: String) {
        guard let slot = DataSlot.allCases.first(where: { $0.name == name }) else { return nil }
        self = slot
    }

    /// The most bytes the applet keeps: 127 of public and cash data (a length byte goes in front of them in its
    /// 128-byte buffers), and an NDEF file of 512 bytes (its own 2-byte length included).
    public var capacity: Int { self == .ndef ? 512 : 127 }
}

/// CHANGE PIN P1.
public enum CredentialKind: UInt8, Sendable {
    case pin = 0x00
    case puk = 0x01
    /// Secure channel v1 only.
    case pairingSecret = 0x02
}

/// SIGN P2 on applet 4.x.
public enum SigningAlgorithm: UInt8, Sendable {
    case ecdsa = 0x00
    case schnorrBIP340 = 0x03
}

/// Which secure channel a card speaks.
public enum SecureChannelVersion: Int, Sendable, Codable {
    /// Applet 3.x: pairing, AES-256-CBC with CBC-MAC.
    case v1 = 1
    /// Applet 4.x: identity certificate, AES-128-CCM.
    case v2 = 2
}
