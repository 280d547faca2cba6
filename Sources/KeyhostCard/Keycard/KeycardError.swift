import KeyhostCrypto

/// Keycard failures, each with the command it came from where that helps.
///
/// Status words with a Keycard meaning become named cases; any other word is kept raw in `.status`.
public enum KeycardError: Error, Equatable, CustomStringConvertible {
    /// VERIFY PIN failed (63Cx) with tries left.
    case wrongPIN(triesLeft: Int)
    /// The PIN has no tries left (63C0); UNBLOCK PIN with the PUK is needed.
    case pinBlocked
    /// UNBLOCK PIN failed (63Cx) with PUK tries left.
    case wrongPUK(triesLeft: Int)
    /// The PUK has no tries left: only FACTORY RESET can bring the card back.
    case pukBlocked
    /// PAIR found no free pairing slot (6A84).
    case noFreePairingSlot
    /// 6985: the command's preconditions are not met (PIN not verified, no key, wrong path kind, ...).
    case conditionsNotSatisfied(KeycardInstruction)
    /// 6A80: the card rejected the data field.
    case wrongData(KeycardInstruction)
    /// 6A86 / 6B00: the card rejected P1-P2.
    case incorrectParameters(KeycardInstruction, StatusWord)
    /// 6A88: e.g. SIGN PIN-less with no PIN-less path set.
    case referencedDataNotFound(KeycardInstruction)
    /// 6D00: the applet does not know the instruction.
    case instructionNotSupported(KeycardInstruction)
    /// The card has not been initialised (INIT) yet.
    case notInitialized
    /// INIT on a card that is already initialised.
    case alreadyInitialized
    /// 6982: the card dropped the secure channel (bad MAC, bad cryptogram); open a new one.
    case secureChannelReset(KeycardInstruction)
    /// A command that needs a secure channel was sent without one.
    case secureChannelNotOpen(KeycardInstruction)
    /// Secure channel v1 needs a pairing (PAIR, or a stored index and key).
    case notPaired
    /// The card failed to prove it knows the pairing secret.
    case pairingCryptogramMismatch
    /// The card's identity certificate is not signed by a trusted CA, or its handshake signature is wrong.
    case untrustedCard(String)
    /// The card's identity certificate is signed by a CA that is not trusted: its key, recovered from the signature.
    case unknownCA(PublicKey)
    /// A response the client cannot make sense of.
    case invalidResponse(KeycardInstruction, String)
    /// The applet version on the card does not offer this.
    case unsupported(KeycardInstruction, applet: String)
    /// The command exists on this applet, but not in the form asked for (a relative path on 4.x, Schnorr on 3.x, …).
    case unsupportedForm(KeycardInstruction, what: String, applet: String)
    /// A caller argument the client refuses before sending anything (secrets are never echoed).
    case invalidArgument(String)
    /// Any other status word, kept raw.
    case status(StatusWord, KeycardInstruction)

    /// The error a status word means for `instruction`, or nil for 9000.
    public static func from(_ sw: StatusWord, instruction: KeycardInstruction) -> KeycardError? {
        switch sw {
        case .success:
            return nil
        case .verificationFailedBase:
            let tries = sw.triesLeft ?? 0
            if instruction == .unblockPIN { return tries == 0 ? .pukBlocked : .wrongPUK(triesLeft: tries) }
            if instruction == .verifyPIN { return tries == 0 ? .pinBlocked : .wrongPIN(triesLeft: tries) }
            return .status(sw, instruction)
        case .fileFull where instruction == .pair:
            return .noFreePairingSlot
        case .conditionsNotSatisfied:
            return .conditionsNotSatisfied(instruction)
        case .wrongData:
            return .wrongData(instruction)
        case .incorrectP1P2, .wrongP1P2:
            return .incorrectParameters(instruction, sw)
        case .referencedDataNotFound:
            return .referencedDataNotFound(instruction)
        case .insNotSupported:
            return .instructionNotSupported(instruction)
        case .securityStatusNotSatisfied:
            return .secureChannelReset(instruction)
        default:
            return .status(sw, instruction)
        }
    }

    /// The raw status word behind the error, when there is one.
    public var statusWord: StatusWord? {
        switch self {
        case .wrongPIN(let tries), .wrongPUK(let tries): return .verificationFailed(triesLeft: tries)
        case .pinBlocked, .pukBlocked: return .verificationFailed(triesLeft: 0)
        case .noFreePairingSlot: return .fileFull
        case .conditionsNotSatisfied: return .conditionsNotSatisfied
        case .wrongData: return .wrongData
        case .incorrectParameters(_, let sw), .status(let sw, _): return sw
        case .referencedDataNotFound: return .referencedDataNotFound
        case .instructionNotSupported: return .insNotSupported
        case .secureChannelReset: return .securityStatusNotSatisfied
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .wrongPIN(let tries): return "wrong PIN, \(tries) \(tries == 1 ? "try" : "tries") left"
        case .pinBlocked: return "PIN blocked; unblock it with the PUK"
        case .wrongPUK(let tries): return "wrong PUK, \(tries) \(tries == 1 ? "try" : "tries") left"
        case .pukBlocked: return "PUK blocked; the card can only be factory reset"
        case .noFreePairingSlot: return "no free pairing slot (6A84); unpair a client first"
        case .conditionsNotSatisfied(let ins): return "\(ins): conditions not satisfied (6985)"
        case .wrongData(let ins): return "\(ins): wrong data (6A80)"
        case .incorrectParameters(let ins, let sw): return "\(ins): incorrect parameters P1-P2 (\(sw))"
        case .referencedDataNotFound(let ins): return "\(ins): referenced data not found (6A88)"
        case .instructionNotSupported(let ins): return "\(ins): instruction not supported (6D00)"
        case .notInitialized: return "card is not initialised; run INIT first"
        case .alreadyInitialized: return "card is already initialised"
        case .secureChannelReset(let ins): return "\(ins): secure channel was reset by the card (6982); open a new one"
        case .secureChannelNotOpen(let ins): return "\(ins) needs an open secure channel"
        case .notPaired: return "no pairing; pair with the card first"
        case .pairingCryptogramMismatch: return "card cryptogram does not match the pairing secret"
        case .untrustedCard(let why): return "untrusted card: \(why)"
        case .unknownCA(let key): return "untrusted card: certificate signed by unknown CA \(Hex.encode(key.compressed))"
        case .invalidResponse(let ins, let why): return "\(ins): invalid response: \(why)"
        case .unsupported(let ins, let applet): return "\(ins) is not offered by applet \(applet)"
        case .unsupportedForm(let ins, let what, let applet): return "\(ins) on applet \(applet) does not take \(what)"
        case .invalidArgument(let why): return why
        case .status(let sw, let ins): return "\(ins): card answered \(sw)"
        }
    }
}
