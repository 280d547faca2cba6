/// SeedKeeper failures of its own commands. The shared session (SELECT, status, secure channel, PIN) throws
/// `SatochipError`, whose kinds are the same names.
public enum SeedKeeperError: Error, Equatable, CustomStringConvertible {
    /// 9C06: the command needs VERIFY PIN first.
    case pinRequired(SeedKeeperInstruction)
    /// 9C04: SETUP has not been done.
    case setupNotDone(SeedKeeperInstruction)
    /// 9C08: no secret has this id.
    case secretNotFound(id: UInt16)
    /// 9C31: the secret's export rights forbid this export.
    case exportNotAllowed(id: UInt16)
    /// 9C01: the card's secret memory is full.
    case noMemoryLeft(SeedKeeperInstruction)
    /// 9C30: a multi-step command was interrupted by another command; start it again.
    case lockError(SeedKeeperInstruction)
    /// 9C32: the secret is longer than the size announced at the start of the import.
    case dataTooLong
    /// 9C38: the secret has the wrong type for the operation.
    case wrongSecretType(SeedKeeperInstruction)
    /// 9C0F, 9C10, 9C11, 6700: the card rejected the command's data or parameters.
    case invalidParameter(SeedKeeperInstruction, StatusWord)
    /// 9C20, 9C21: the card wants a secure channel, or has none open.
    case secureChannelRequired(SeedKeeperInstruction)
    /// 9C22, 9C23: the card refused the secure channel message (IV replay, bad MAC); open a new channel.
    case secureChannelRejected(SeedKeeperInstruction, StatusWord)
    /// 6D00: the applet does not know the instruction (an older applet).
    case instructionNotSupported(SeedKeeperInstruction)
    /// The secret's bytes do not hash to the fingerprint the card reports: never trust them.
    case fingerprintMismatch(id: UInt16, expected: String, actual: String)
    /// SELECT found no SeedKeeper applet.
    case notSeedKeeper(StatusWord)
    /// A response the client cannot make sense of.
    case invalidResponse(SeedKeeperInstruction, String)
    /// A caller argument refused before anything is sent (secrets are never echoed).
    case invalidArgument(String)
    /// Any other status word, kept raw.
    case status(StatusWord, SeedKeeperInstruction)

    /// The error a status word means for `instruction`, or nil for 9000.
    static func from(_ sw: StatusWord, instruction: SeedKeeperInstruction, id: UInt16 = 0) -> SeedKeeperError? {
        switch sw.rawValue {
        case 0x9000: return nil
        case 0x9C06: return .pinRequired(instruction)
        case 0x9C04: return .setupNotDone(instruction)
        case 0x9C08: return .secretNotFound(id: id)
        case 0x9C31: return .exportNotAllowed(id: id)
        case 0x9C01: return .noMemoryLeft(instruction)
        case 0x9C30: return .lockError(instruction)
        case 0x9C32: return .dataTooLong
        case 0x9C38: return .wrongSecretType(instruction)
        case 0x9C0F, 0x9C10, 0x9C11, 0x6700: return .invalidParameter(instruction, sw)
        case 0x9C20, 0x9C21: return .secureChannelRequired(instruction)
        case 0x9C22, 0x9C23: return .secureChannelRejected(instruction, sw)
        case 0x6D00: return .instructionNotSupported(instruction)
        default: return .status(sw, instruction)
        }
    }

    /// A stable machine-readable name for the failure (what scripts and the CLI's JSON report).
    public var kind: String {
        switch self {
        case .pinRequired: return "pin_required"
        case .setupNotDone: return "not_initialized"
        case .secretNotFound: return "not_found"
        case .exportNotAllowed: return "export_forbidden"
        case .noMemoryLeft: return "card_full"
        case .lockError: return "conditions_not_satisfied"
        case .dataTooLong: return "card_rejected"
        case .wrongSecretType: return "card_rejected"
        case .invalidParameter: return "card_rejected"
        case .secureChannelRequired, .secureChannelRejected: return "secure_channel"
        case .instructionNotSupported: return "unsupported"
        case .fingerprintMismatch: return "integrity"
        case .notSeedKeeper: return "wrong_card"
        case .invalidResponse: return "invalid_response"
        case .invalidArgument: return "invalid_argument"
        case .status: return "card_status"
        }
    }

    public var description: String {
        switch self {
        case .pinRequired(let ins): return "SeedKeeper \(ins): the PIN must be verified first (VERIFY PIN)"
        case .setupNotDone(let ins): return "SeedKeeper \(ins): the card is not set up yet; run SETUP with a PIN and PUK first"
        case .secretNotFound(let id): return "SeedKeeper: no secret with id \(id) on the card; list the secret headers to see the ids"
        case .exportNotAllowed(let id): return "SeedKeeper EXPORT SECRET: secret \(id)'s export rights forbid a plain export"
        case .noMemoryLeft(let ins): return "SeedKeeper \(ins): the card's secret memory is full; delete a secret first"
        case .lockError(let ins): return "SeedKeeper \(ins): another command interrupted this multi-step command (9C30); start it again"
        case .dataTooLong: return "SeedKeeper IMPORT SECRET: the secret is longer than the size announced (9C32)"
        case .wrongSecretType(let ins): return "SeedKeeper \(ins): the secret has the wrong type for this (9C38)"
        case .invalidParameter(let ins, let sw): return "SeedKeeper \(ins): the card rejected the command's data or parameters (SW \(sw))"
        case .secureChannelRequired(let ins): return "SeedKeeper \(ins): the card wants a secure channel; open one (INIT SECURE CHANNEL)"
        case .secureChannelRejected(let ins, let sw): return "SeedKeeper \(ins): the card rejected the secure channel message (SW \(sw)); open a new channel"
        case .instructionNotSupported(let ins): return "SeedKeeper \(ins): this applet does not support the command"
        case .fingerprintMismatch(let id, let expected, let actual):
            return "SeedKeeper: secret \(id)'s bytes hash to fingerprint \(actual), the card reports \(expected); the secret is corrupt or was tampered with and must not be used"
        case .notSeedKeeper(let sw): return "no SeedKeeper applet on this card (SELECT answered \(sw)); check the reader and the card"
        case .invalidResponse(let ins, let why): return "SeedKeeper \(ins): unreadable answer from the card: \(why)"
        case .invalidArgument(let why): return "SeedKeeper: \(why)"
        case .status(let sw, let ins): return "SeedKeeper \(ins): the card answered SW \(sw)"
        }
    }
}
