import KeyhostCrypto

/// A secret's header as the card answers it: `[id(2) | type | origin | export | nb_plain | nb_secure | counter |
/// fingerprint(4) | subtype | RFU | label_size | label]`.
public struct SeedKeeperSecretHeader: Equatable, Sendable {
    public let id: UInt16
    public let type: SeedKeeperSecretType
    public let origin: UInt8
    /// The export byte as stored (its low two bits are `exportRights`).
    public let exportControl: UInt8
    public let plainExports: UInt8
    public let secureExports: UInt8
    public let exportCounter: UInt8
    /// The first 4 bytes of SHA-256 of the secret's bytes.
    public let fingerprint: [UInt8]
    public let subtype: UInt8
    public let rfu2: UInt8
    public let label: [UInt8]
    /// The header bytes as answered (what a plain export's signature covers, with the secret).
    public let bytes: [UInt8]

    public var exportRights: SeedKeeperExportRights { SeedKeeperExportRights(rawValue: exportControl & 0x03) ?? .forbidden }
    /// The label as text (invalid UTF-8 is replaced, as pysatochip's fallback shows it).
    public var labelText: String { String(decoding: label, as: UTF8.self) }
    public var fingerprintHex: String { Hex.encode(fingerprint) }

    /// Parses a header at the start of `data`; `exact` says nothing may follow it.
    init(parsing data: [UInt8], instruction: SeedKeeperInstruction, exact: Bool) throws {
        let fixed = 2 + SeedKeeper.headerSize
        guard data.count >= fixed else {
            throw SeedKeeperError.invalidResponse(instruction, "secret header of \(data.count) bytes, at least \(fixed) expected")
        }
        let labelSize = Int(data[14])
        guard labelSize <= SeedKeeper.maxLabelLength else {
            throw SeedKeeperError.invalidResponse(instruction, "label of \(labelSize) bytes, at most \(SeedKeeper.maxLabelLength) expected")
        }
        guard data.count >= fixed + labelSize, !exact || data.count == fixed + labelSize else {
            throw SeedKeeperError.invalidResponse(instruction, "secret header of \(data.count) bytes, its label size says \(fixed + labelSize)")
        }
        id = UInt16(data[0]) << 8 | UInt16(data[1])
        type = SeedKeeperSecretType(rawValue: data[2])
        origin = data[3]
        exportControl = data[4]
        plainExports = data[5]; secureExports = data[6]; exportCounter = data[7]
        fingerprint = Array(data[8..<12])
        subtype = data[12]; rfu2 = data[13]
        label = Array(data[15..<(15 + labelSize)])
        bytes = Array(data[0..<(fixed + labelSize)])
    }

    /// The fingerprint the applet stores for `secret`: SHA-256's first 4 bytes.
    public static func fingerprint(of secret: SecretBytes) -> [UInt8] {
        Array(Hash.sha256(secret.revealedBytes()).prefix(4))
    }
}

/// A secret exported in plain, with its header; its bytes matched the fingerprint and the card's signature.
public struct SeedKeeperSecret: Sendable {
    public let header: SeedKeeperSecretHeader
    public let secret: SecretBytes
}

/// The byte layouts pysatochip and the SeedKeeper tools give secrets of the common types.
public enum SeedKeeperSecretEncoding {
    /// A BIP39 mnemonic (type 0x30): `[size | mnemonic | size | passphrase]`.
    public static func bip39Mnemonic(_ mnemonic: SecretBytes, passphrase: SecretBytes = SecretBytes([])) throws -> SecretBytes {
        guard mnemonic.count <= 255, passphrase.count <= 255 else {
            throw SeedKeeperError.invalidArgument("a mnemonic and a passphrase are at most 255 bytes each")
        }
        return SecretBytes([UInt8(mnemonic.count)] + mnemonic.revealedBytes() + [UInt8(passphrase.count)] + passphrase.revealedBytes())
    }

    /// A password (type 0x90): `[size | password]`.
    public static func password(_ password: SecretBytes) throws -> SecretBytes {
        guard password.count <= 255 else { throw SeedKeeperError.invalidArgument("a password is at most 255 bytes") }
        return SecretBytes([UInt8(password.count)] + password.revealedBytes())
    }

    /// A master seed's bytes from its exported form `[size | seed]` (what GENERATE MASTERSEED stores).
    public static func masterSeed(_ exported: SecretBytes) throws -> SecretBytes {
        let bytes = exported.revealedBytes()
        guard let size = bytes.first, Int(size) == bytes.count - 1, SeedKeeper.masterSeedSizes.contains(Int(size)) else {
            throw SeedKeeperError.invalidArgument("a master seed secret is [size | 16...64 seed bytes]; this one has \(bytes.count) bytes that do not match")
        }
        return SecretBytes(bytes.dropFirst())
    }
}
