/// GET STATUS: versions, tries left and the card's flags.
public struct SatochipStatus: Equatable, Sendable {
    public var protocolMajor: UInt8
    public var protocolMinor: UInt8
    public var appletMajor: UInt8
    public var appletMinor: UInt8
    /// PIN 0 and PUK 0 tries left (0 before SETUP).
    public var pinTriesLeft: Int
    public var pukTriesLeft: Int
    public var needs2FA: Bool
    public var isSeeded: Bool
    public var isSetupDone: Bool
    public var needsSecureChannel: Bool

    /// "0.12-0.6": protocol version, then applet version, as Satochip writes them.
    public var version: String { "\(protocolMajor).\(protocolMinor)-\(appletMajor).\(appletMinor)" }

    /// Protocol version as 256·major + minor, as pysatochip compares it.
    public var protocolVersion: Int { Int(protocolMajor) << 8 | Int(protocolMinor) }

    public init(protocolMajor: UInt8, protocolMinor: UInt8, appletMajor: UInt8, appletMinor: UInt8, pinTriesLeft: Int,
                pukTriesLeft: Int, needs2FA: Bool, isSeeded: Bool, isSetupDone: Bool, needsSecureChannel: Bool) {
        self.protocolMajor = protocolMajor; self.protocolMinor = protocolMinor
        self.appletMajor = appletMajor; self.appletMinor = appletMinor
        self.pinTriesLeft = pinTriesLeft; self.pukTriesLeft = pukTriesLeft
        self.needs2FA = needs2FA; self.isSeeded = isSeeded; self.isSetupDone = isSetupDone
        self.needsSecureChannel = needsSecureChannel
    }

    /// Parses the answer: 4 version bytes, then (when present) tries and flags; newer applets append more.
    /// Missing flags take pysatochip's defaults (setup done, no secure channel) so old applets read the same way.
    public init(parsing data: [UInt8]) throws {
        guard data.count >= 4 else {
            throw SatochipError.invalidResponse(.getStatus, "\(data.count) bytes, at least 4 expected")
        }
        guard data.count <= 64 else { throw SatochipError.invalidResponse(.getStatus, "\(data.count) bytes, at most 64 expected") }
        func flag(_ index: Int, default value: Bool) -> Bool { index < data.count ? data[index] != 0 : value }
        func tries(_ index: Int) -> Int { index < data.count ? Int(data[index]) : 0 }
        self.init(protocolMajor: data[0], protocolMinor: data[1], appletMajor: data[2], appletMinor: data[3],
                  pinTriesLeft: tries(4), pukTriesLeft: tries(5), needs2FA: flag(8, default: false),
                  isSeeded: flag(9, default: false), isSetupDone: flag(10, default: true),
                  needsSecureChannel: flag(11, default: false))
    }
}
