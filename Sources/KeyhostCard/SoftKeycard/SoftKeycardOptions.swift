import KeyhostCrypto

/// How a `SoftKeycard` is built.
public struct SoftKeycardOptions: Sendable {
    /// 3.x (secure channel v1, pairing) or 4.x (secure channel v2, identity certificate).
    public var appletVersion: AppletVersion = .v3_2
    /// Persistent pairing slots (3.2 has 10).
    public var pairingSlots: Int = 10
    /// A seed makes every random byte (keys, salts, challenges) reproducible; nil uses the system CSPRNG.
    public var randomSeed: [UInt8]?
    /// The CA that signs a 4.x card's identity certificate; nil uses `SoftKeycard.testCAKey()`.
    public var caKey: PrivateKey?
    /// Reproduce the 4.0 applet writing the outer A4 length of SELECT one byte short.
    public var selectLengthQuirk: Bool = true

    public init(appletVersion: AppletVersion = .v3_2, pairingSlots: Int = 10, randomSeed: [UInt8]? = nil,
                caKey: PrivateKey? = nil, selectLengthQuirk: Bool = true) {
        self.appletVersion = appletVersion
        self.pairingSlots = pairingSlots
        self.randomSeed = randomSeed
        self.caKey = caKey
        self.selectLengthQuirk = selectLengthQuirk
    }
}

/// A failure the software card injects instead of answering.
public enum SoftKeycardFault: Equatable, Sendable {
    /// Answer this status word without processing the command.
    case statusWord(StatusWord)
    /// Throw `CardChannelError.connectionLost` and lose all session state, as if the card were pulled.
    case connectionDrop
}

/// Errors of the software card itself (not card answers).
public enum SoftKeycardError: Error, Equatable, CustomStringConvertible {
    case corruptState(path: String, reason: String)
    case io(path: String, operation: String, errno: Int32)
    case unsupportedVersion(AppletVersion)

    public var description: String {
        switch self {
        case .corruptState(let path, let reason): return "soft keycard state \(path) is unreadable: \(reason)"
        case .io(let path, let operation, let code): return "soft keycard state \(path): \(operation) failed (errno \(code))"
        case .unsupportedVersion(let v): return "soft keycard emulates applets 3.x and 4.x, not \(v)"
        }
    }
}

/// A status word the card-side code throws; becomes the answer.
struct CardStatus: Error {
    let sw: StatusWord
    init(_ sw: StatusWord) { self.sw = sw }
}
