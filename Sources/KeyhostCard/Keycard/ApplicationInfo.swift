import KeyhostCrypto

/// Applet version from SELECT (0.0 when the pre-initialisation answer carries none).
public struct AppletVersion: Comparable, Hashable, Sendable, CustomStringConvertible, Codable {
    public var major: UInt8
    public var minor: UInt8
    public init(major: UInt8, minor: UInt8) { self.major = major; self.minor = minor }
    public static func < (a: AppletVersion, b: AppletVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    public var description: String { "\(major).\(minor)" }
    public static let v3_2 = AppletVersion(major: 3, minor: 2)
    public static let v4_0 = AppletVersion(major: 4, minor: 0)
}

/// Applet capability bits (tag 8D).
public struct Capabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let secureChannel = Capabilities(rawValue: 0x01)
    public static let keyManagement = Capabilities(rawValue: 0x02)
    public static let credentialsManagement = Capabilities(rawValue: 0x04)
    public static let ndef = Capabilities(rawValue: 0x08)
    public static let factoryReset = Capabilities(rawValue: 0x10)
    public static let all: Capabilities = [.secureChannel, .keyManagement, .credentialsManagement, .ndef, .factoryReset]
}

/// What SELECT tells about the applet.
///
/// Three shapes exist: the 3.x pre-initialisation answer `80 41 <secure-channel key>`; the 3.x template
/// `A4 { 8F uid, 80 key, 02 version, 02 free slots, 8E key UID, 8D capabilities }`; and the 4.x template
/// `A4 { 02 version, 8C status, 8E key UID, 8D capabilities, 8A certificate }`.
public struct ApplicationInfo: Equatable, Sendable {
    public var isInitialized: Bool
    public var version: AppletVersion
    public var instanceUID: [UInt8]?
    /// The card's secure channel v1 ECDH key (3.x).
    public var secureChannelPublicKey: PublicKey?
    public var freePairingSlots: Int?
    /// SHA-256 of the master public key; nil when no key is loaded.
    public var keyUID: [UInt8]?
    public var capabilities: Capabilities
    /// 4.x status byte: 0x10 initialised, 0x20 LEE mode, low nibble PIN tries.
    public var status: UInt8?
    /// 4.x identity certificate.
    public var identityCertificate: IdentityCertificate?

    public var secureChannelVersion: SecureChannelVersion { version >= .v4_0 ? .v2 : .v1 }
    public var hasMasterKey: Bool { keyUID != nil }
    /// 4.x: PIN tries left, from the status byte; nil before INIT (there is no PIN yet, and the nibble reads 0).
    public var pinRetries: Int? {
        guard let status, isInitialized else { return nil }
        return Int(status & 0x0F)
    }

    public init(isInitialized: Bool, version: AppletVersion, instanceUID: [UInt8]? = nil, secureChannelPublicKey: PublicKey? = nil,
                freePairingSlots: Int? = nil, keyUID: [UInt8]? = nil, capabilities: Capabilities = .all, status: UInt8? = nil,
                identityCertificate: IdentityCertificate? = nil) {
        self.isInitialized = isInitialized; self.version = version; self.instanceUID = instanceUID
        self.secureChannelPublicKey = secureChannelPublicKey; self.freePairingSlots = freePairingSlots; self.keyUID = keyUID
        self.capabilities = capabilities; self.status = status; self.identityCertificate = identityCertificate
    }

    /// Parses a SELECT answer.
    ///
    /// Tolerance, and only this one: the 4.0 applet writes the outer A4 length one byte short
    /// (`off - lenoff - 2` in `selectApplet`); when the declared length is exactly one less than the bytes
    /// that follow, the template is read to the end of the answer.
    public init(selectResponse data: [UInt8]) throws {
        guard let first = data.first else { throw KeycardError.invalidResponse(.select, "empty SELECT answer") }
        if first == 0x80 {
            let tlv: TLV
            do { tlv = try TLV.parseAll(data).first(tag: 0x80) ?? TLV(tag: 0x80, value: []) } catch {
                throw KeycardError.invalidResponse(.select, "\(error)")
            }
            let key = tlv.value.isEmpty ? nil : try? PublicKey(bytes: tlv.value)
            self.init(isInitialized: false, version: AppletVersion(major: 0, minor: 0), secureChannelPublicKey: key,
                      capabilities: key == nil ? .credentialsManagement : [.credentialsManagement, .secureChannel])
            return
        }
        guard first == 0xA4 else { throw KeycardError.invalidResponse(.select, "top-level tag 0x\(byteHex(first)), expected A4 or 80") }
        let fields: [TLV]
        do {
            let header = try TLV.parseHeader(data, at: 0)
            let available = data.count - header.valueOffset
            let length = header.length == available - 1 ? available : header.length
            guard length <= available else {
                throw TLVError.valueTruncated(tag: 0xA4, declared: header.length, available: available)
            }
            fields = try TLV.parseAll(Array(data[header.valueOffset..<(header.valueOffset + length)]))
        } catch let error as TLVError {
            throw KeycardError.invalidResponse(.select, "\(error)")
        }
        let integers = fields.filter { $0.tag == 0x02 }
        guard let versionBytes = integers.first(where: { $0.value.count == 2 })?.value else {
            throw KeycardError.invalidResponse(.select, "no applet version (tag 02, 2 bytes)")
        }
        let version = AppletVersion(major: versionBytes[0], minor: versionBytes[1])
        let slots = integers.first(where: { $0.value.count == 1 })?.value.first.map(Int.init)
        var scKey: PublicKey?
        if let key = fields.first(tag: 0x80)?.value, !key.isEmpty {
            do { scKey = try PublicKey(bytes: key) } catch { throw KeycardError.invalidResponse(.select, "secure channel key: \(error)") }
        }
        var certificate: IdentityCertificate?
        if let cert = fields.first(tag: 0x8A)?.value { certificate = try IdentityCertificate(bytes: cert) }
        let keyUID = fields.first(tag: 0x8E)?.value
        let status = fields.first(tag: 0x8C)?.value.first
        let initialized = status.map { $0 & 0x10 != 0 } ?? true
        self.init(isInitialized: initialized, version: version, instanceUID: fields.first(tag: 0x8F)?.value, secureChannelPublicKey: scKey,
                  freePairingSlots: slots, keyUID: (keyUID?.isEmpty ?? true) ? nil : keyUID,
                  capabilities: Capabilities(rawValue: fields.first(tag: 0x8D)?.value.first ?? Capabilities.all.rawValue),
                  status: status, identityCertificate: certificate)
    }
}

/// GET STATUS (P1 00): retry counters and whether a key is loaded.
public struct ApplicationStatus: Equatable, Sendable {
    public var pinRetries: Int
    public var pukRetries: Int
    public var hasMasterKey: Bool

    public init(pinRetries: Int, pukRetries: Int, hasMasterKey: Bool) {
        self.pinRetries = pinRetries; self.pukRetries = pukRetries; self.hasMasterKey = hasMasterKey
    }

    /// Parses `A3 { 02 pin, 02 puk, 01 key }`.
    public init(response: [UInt8]) throws {
        do {
            guard let template = try TLV.parseAll(response).first(tag: 0xA3) else { throw TLVError.missingTag(0xA3, in: "GET STATUS answer") }
            let fields = try template.children()
            let ints = fields.filter { $0.tag == 0x02 }
            guard ints.count >= 2, let pin = ints[0].value.first, let puk = ints[1].value.first,
                  let key = fields.first(tag: 0x01)?.value.first else {
                throw TLVError.missingTag(0x02, in: "GET STATUS template")
            }
            self.init(pinRetries: Int(pin), pukRetries: Int(puk), hasMasterKey: key != 0)
        } catch let error as TLVError {
            throw KeycardError.invalidResponse(.getStatus, "\(error)")
        }
    }
}
