/// The hardware-wallet card families keyhost speaks to, each a module of its own under `KeyhostCard`.
public enum CardFamily: String, CaseIterable, Sendable, CustomStringConvertible {
    case keycard
    case satochip
    case seedkeeper
    case tapsigner
    case satscard

    /// The name its maker gives it.
    public var description: String {
        switch self {
        case .keycard: return "Keycard"
        case .satochip: return "Satochip"
        case .seedkeeper: return "SeedKeeper"
        case .tapsigner: return "TAPSIGNER"
        case .satscard: return "SATSCARD"
        }
    }

    /// The AID SELECT names. TAPSIGNER and SATSCARD share Coinkite's; their status answer tells them apart.
    public var aid: [UInt8] {
        switch self {
        case .keycard: return Keycard.instanceAID
        case .satochip: return Array("SatoChip".utf8)
        case .seedkeeper: return Array("SeedKeeper".utf8)
        case .tapsigner, .satscard: return [0xF0] + Array("CoinkiteCARDv1".utf8)
        }
    }
}
