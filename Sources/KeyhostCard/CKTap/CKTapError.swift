/// Tap-card failures: the card's numbered errors, answers that break the protocol, and checks that failed.
public enum CKTapError: Error, Equatable, CustomStringConvertible {
    /// 205: a random value was unlucky (a signature's R, a key); the same command may simply be repeated.
    case unluckyNumber(command: String)
    /// 400: the card rejected the arguments.
    case badArguments(command: String, message: String)
    /// 401: wrong CVC.
    case badAuth(command: String)
    /// 403: the command needs the CVC and none was given.
    case needsAuth(command: String)
    /// 404: the card does not know the command (or it is not for this product).
    case unknownCommand(command: String, message: String)
    /// 405: the command can never succeed on this card.
    case invalidCommand(command: String, message: String)
    /// 406: not now, in the card's current state (no key yet, slot sealed, …).
    case invalidState(command: String, message: String)
    /// 417: the nonce given was too regular.
    case weakNonce(command: String)
    /// 422: the card could not read the CBOR sent.
    case badCBOR(command: String)
    /// 425: a TAPSIGNER changes its CVC only after one backup.
    case backupFirst(command: String)
    /// 429: too many wrong CVCs; `wait` until the delay (seconds) is used up.
    case rateLimited(command: String, delay: Int?)
    /// Any other numbered error the card sent.
    case card(code: Int, command: String, message: String)
    /// A status word other than 9000 without a CBOR error body (e.g. 6D00 before SELECT).
    case statusWord(StatusWord, command: String)
    /// The answer is not the CBOR, or lacks the fields, the protocol promises.
    case malformedAnswer(command: String, reason: String)
    /// A signature or value the card sent does not verify: the card may be counterfeit or the link tampered with.
    case verificationFailed(command: String, reason: String)
    /// The certificate chain leads to a root key the caller does not trust.
    case untrustedRoot([UInt8])
    /// The command is for the other product (TAPSIGNER vs. SATSCARD).
    case wrongProduct(command: String, needs: String)
    /// A caller argument refused before anything is sent (secrets are never echoed).
    case invalidArgument(String)

    /// The error a card's `code` means.
    public static func fromCard(code: Int, command: String, message: String, delay: Int?) -> CKTapError {
        switch code {
        case 205: return .unluckyNumber(command: command)
        case 400: return .badArguments(command: command, message: message)
        case 401: return .badAuth(command: command)
        case 403: return .needsAuth(command: command)
        case 404: return .unknownCommand(command: command, message: message)
        case 405: return .invalidCommand(command: command, message: message)
        case 406: return .invalidState(command: command, message: message)
        case 417: return .weakNonce(command: command)
        case 422: return .badCBOR(command: command)
        case 425: return .backupFirst(command: command)
        case 429: return .rateLimited(command: command, delay: delay)
        default: return .card(code: code, command: command, message: message)
        }
    }

    /// A stable machine-readable name for the failure, like Keycard's error kinds.
    public var kind: String {
        switch self {
        case .unluckyNumber: return "unlucky_number"
        case .badArguments: return "bad_arguments"
        case .badAuth: return "bad_auth"
        case .needsAuth: return "needs_auth"
        case .unknownCommand: return "unknown_command"
        case .invalidCommand: return "invalid_command"
        case .invalidState: return "invalid_state"
        case .weakNonce: return "weak_nonce"
        case .badCBOR: return "bad_cbor"
        case .backupFirst: return "backup_first"
        case .rateLimited: return "rate_limited"
        case .card: return "card_error"
        case .statusWord: return "status_word"
        case .malformedAnswer: return "malformed_answer"
        case .verificationFailed: return "verification_failed"
        case .untrustedRoot: return "untrusted_root"
        case .wrongProduct: return "wrong_product"
        case .invalidArgument: return "invalid_argument"
        }
    }

    /// The card's numeric code, where the failure is one.
    public var code: Int? {
        switch self {
        case .unluckyNumber: return 205
        case .badArguments: return 400
        case .badAuth: return 401
        case .needsAuth: return 403
        case .unknownCommand: return 404
        case .invalidCommand: return 405
        case .invalidState: return 406
        case .weakNonce: return 417
        case .badCBOR: return 422
        case .backupFirst: return 425
        case .rateLimited: return 429
        case .card(let code, _, _): return code
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .unluckyNumber(let c): return "tap card \(c): unlucky random value (205); repeat the command"
        case .badArguments(let c, let m): return "tap card \(c): bad arguments (400: \(m)); check the values given"
        case .badAuth(let c): return "tap card \(c): wrong CVC (401); after three wrong CVCs the card imposes a 15 s delay"
        case .needsAuth(let c): return "tap card \(c): needs the CVC (403); give it"
        case .unknownCommand(let c, let m): return "tap card \(c): unknown command (404: \(m)); this card or product does not offer it"
        case .invalidCommand(let c, let m): return "tap card \(c): invalid command (405: \(m))"
        case .invalidState(let c, let m): return "tap card \(c): not possible in the card's current state (406: \(m))"
        case .weakNonce(let c): return "tap card \(c): weak nonce (417); use a random nonce"
        case .badCBOR(let c): return "tap card \(c): the card could not decode the request (422)"
        case .backupFirst(let c): return "tap card \(c): make a backup first (425); a TAPSIGNER changes its CVC only after one"
        case .rateLimited(let c, let d):
            return "tap card \(c): rate limited after wrong CVCs (429)\(d.map { ", \($0) s of delay left" } ?? ""); send `wait` until the delay is 0, then retry"
        case .card(let code, let c, let m): return "tap card \(c): error \(code) (\(m))"
        case .statusWord(let sw, let c): return "tap card \(c): status word \(sw); SELECT the applet first or check the reader"
        case .malformedAnswer(let c, let r): return "tap card \(c): malformed answer: \(r)"
        case .verificationFailed(let c, let r): return "tap card \(c): verification failed: \(r); the card may be counterfeit or the link tampered with"
        case .untrustedRoot(let key):
            return "tap card certificate chain ends at root key \(key.map { String($0, radix: 16).leftPadded() }.joined()), which is not trusted; give the right factory root"
        case .wrongProduct(let c, let needs): return "tap card \(c): only a \(needs) offers this"
        case .invalidArgument(let what): return "tap card: \(what)"
        }
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
