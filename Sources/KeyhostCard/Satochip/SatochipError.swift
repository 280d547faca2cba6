/// Satochip failures. Status words the applet defines become named cases; any other is kept raw in `.status`.
public enum SatochipError: Error, Equatable, CustomStringConvertible {
    /// A PIN check failed (63Cx) with tries left.
    case wrongPIN(triesLeft: Int)
    /// The PIN has no tries left (9C0C, or 63C0): UNBLOCK PIN with the PUK is needed.
    case pinBlocked
    /// UNBLOCK PIN failed (63Cx) with PUK tries left.
    case wrongPUK(triesLeft: Int)
    /// The PUK has no tries left too.
    case pukBlocked
    /// 9C06: the command needs VERIFY PIN first.
    case pinRequired(SatochipInstruction)
    /// 9C04: SETUP has not been done.
    case setupNotDone(SatochipInstruction)
    /// 9C07: SETUP was already done.
    case setupAlreadyDone
    /// 9C14: the card has no seed.
    case notSeeded(SatochipInstruction)
    /// 9C17: the card already has a seed (RESET SEED first).
    case alreadySeeded
    /// 9C20, 9C21: the command needs a secure channel, or the card has none open.
    case secureChannelRequired(SatochipInstruction)
    /// 9C22, 9C23: the card refused the secure channel message (IV replay, bad MAC); open a new channel.
    case secureChannelRejected(SatochipInstruction, StatusWord)
    /// 9C03: the operation is not allowed now (e.g. UNBLOCK PIN of a PIN that is not blocked).
    case operationNotAllowed(SatochipInstruction)
    /// 9C0F, 9C10, 9C11, 6700: the card rejected the command's data or parameters.
    case invalidParameter(SatochipInstruction, StatusWord)
    /// 9C13: e.g. SIGN with key FF before any BIP32 derivation.
    case incorrectInitialization(SatochipInstruction)
    /// 6D00: the applet does not know the instruction.
    case instructionNotSupported(SatochipInstruction)
    /// SELECT found no Satochip applet.
    case notSatochip(StatusWord)
    /// A response the client cannot make sense of.
    case invalidResponse(SatochipInstruction, String)
    /// The card failed its authenticity check (certificate or challenge-response).
    case notGenuine(String)
    /// A caller argument refused before anything is sent (secrets are never echoed).
    case invalidArgument(String)
    /// Any other status word, kept raw.
    case status(StatusWord, SatochipInstruction)

    /// The error a status word means for `instruction`, or nil for 9000.
    public static func from(_ sw: StatusWord, instruction: SatochipInstruction) -> SatochipError? {
        switch sw.rawValue {
        case 0x9000: return nil
        case 0x63C0...0x63FF:
            // The applet writes 63C0 + tries left with a 6-bit count (a try limit may be up to 127), as pysatochip reads it.
            let tries = Int(sw.rawValue & 0x3F)
            if instruction == .unblockPIN { return tries == 0 ? .pukBlocked : .wrongPUK(triesLeft: tries) }
            return tries == 0 ? .pinBlocked : .wrongPIN(triesLeft: tries)
        case 0x9C0C: return instruction == .unblockPIN ? .pukBlocked : .pinBlocked
        case 0x9C06: return .pinRequired(instruction)
        case 0x9C04: return .setupNotDone(instruction)
        case 0x9C07: return .setupAlreadyDone
        case 0x9C14: return .notSeeded(instruction)
        case 0x9C17: return .alreadySeeded
        case 0x9C20, 0x9C21: return .secureChannelRequired(instruction)
        case 0x9C22, 0x9C23: return .secureChannelRejected(instruction, sw)
        case 0x9C03: return .operationNotAllowed(instruction)
        case 0x9C0F, 0x9C10, 0x9C11, 0x6700: return .invalidParameter(instruction, sw)
        case 0x9C13: return .incorrectInitialization(instruction)
        case 0x6D00: return .instructionNotSupported(instruction)
        default: return .status(sw, instruction)
        }
    }

    /// A stable machine-readable name for the failure (what scripts and the CLI's JSON report).
    public var kind: String {
        switch self {
        case .wrongPIN: return "wrong_pin"
        case .pinBlocked: return "pin_blocked"
        case .wrongPUK: return "wrong_puk"
        case .pukBlocked: return "puk_blocked"
        case .pinRequired: return "pin_required"
        case .setupNotDone: return "not_initialized"
        case .setupAlreadyDone: return "already_initialized"
        case .notSeeded: return "no_key"
        case .alreadySeeded: return "already_seeded"
        case .secureChannelRequired: return "secure_channel"
        case .secureChannelRejected: return "secure_channel"
        case .operationNotAllowed: return "conditions_not_satisfied"
        case .invalidParameter: return "card_rejected"
        case .incorrectInitialization: return "conditions_not_satisfied"
        case .instructionNotSupported: return "unsupported"
        case .notSatochip: return "wrong_card"
        case .invalidResponse: return "invalid_response"
        case .notGenuine: return "untrusted_card"
        case .invalidArgument: return "invalid_argument"
        case .status: return "card_status"
        }
    }

    public var description: String {
        switch self {
        case .wrongPIN(let n): return "Satochip: wrong PIN, \(n) \(n == 1 ? "try" : "tries") left before the PIN blocks"
        case .pinBlocked: return "Satochip: the PIN is blocked; unblock it with the PUK (UNBLOCK PIN)"
        case .wrongPUK(let n): return "Satochip: wrong PUK, \(n) \(n == 1 ? "try" : "tries") left"
        case .pukBlocked: return "Satochip: the PUK is blocked too; the card's keys cannot be used any more"
        case .pinRequired(let ins): return "Satochip \(ins): the PIN must be verified first (VERIFY PIN)"
        case .setupNotDone(let ins): return "Satochip \(ins): the card is not set up yet; run SETUP with a PIN and PUK first"
        case .setupAlreadyDone: return "Satochip SETUP: the card is already set up"
        case .notSeeded(let ins): return "Satochip \(ins): the card has no seed; import one first (BIP32 IMPORT SEED)"
        case .alreadySeeded: return "Satochip BIP32 IMPORT SEED: the card already has a seed; reset it first (RESET SEED)"
        case .secureChannelRequired(let ins): return "Satochip \(ins): the card wants a secure channel; open one (INIT SECURE CHANNEL)"
        case .secureChannelRejected(let ins, let sw): return "Satochip \(ins): the card rejected the secure channel message (SW \(sw)); open a new channel"
        case .operationNotAllowed(let ins): return "Satochip \(ins): the card does not allow this now (9C03)"
        case .invalidParameter(let ins, let sw): return "Satochip \(ins): the card rejected the command's data or parameters (SW \(sw))"
        case .incorrectInitialization(let ins): return "Satochip \(ins): no key is loaded for this; derive a BIP32 key first"
        case .instructionNotSupported(let ins): return "Satochip \(ins): this applet does not support the command"
        case .notSatochip(let sw): return "no Satochip applet on this card (SELECT answered \(sw)); check the reader and the card"
        case .invalidResponse(let ins, let why): return "Satochip \(ins): unreadable answer from the card: \(why)"
        case .notGenuine(let why): return "Satochip authenticity check failed: \(why)"
        case .invalidArgument(let why): return "Satochip: \(why)"
        case .status(let sw, let ins): return "Satochip \(ins): the card answered SW \(sw)"
        }
    }
}
