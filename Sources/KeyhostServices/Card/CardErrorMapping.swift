import KeyhostCard
import KeyhostCrypto

extension CardServiceError {
    /// Turns any error from the card stack into a structured error; `command` names what was being done
    /// when the error itself does not say (e.g. "SIGN"). Structured errors pass as they are.
    public static func from(_ error: Error, command: String?) -> Error {
        switch error {
        case is CardServiceError:
            return error
        case let error as KeycardError:
            return from(keycard: error, command: command)
        case let error as SatochipError:
            return from(satochip: error, command: command)
        case let error as CardChannelError:
            switch error {
            case .connectionLost:
                return CardServiceError(kind: "connection_lost", "connection to the card was lost; open the session again", command: command)
            case .replayMismatch, .replayExhausted:
                return CardServiceError(kind: "replay_mismatch", "\(error)", command: command)
            case .badTranscript:
                return CardServiceError(kind: "bad_transcript", "\(error)")
            }
        case let error as CardSignerError:
            return CardServiceError(kind: error.kind, error.description, command: command)
        case let error as SoftKeycardError:
            return CardServiceError(kind: "virtual_card", "\(error)")
        case let error as CKTapError:
            // A wrong CVC is the tap cards' wrong PIN; the rest keep the client's kinds.
            return CardServiceError(kind: error.kind == "bad_auth" ? "wrong_cvc" : error.kind, error.description, command: command)
        case let error as SoftCKTapError:
            return CardServiceError(kind: "virtual_card", "\(error)")
        case let error as APDUError:
            return CardServiceError(kind: "invalid_apdu", "\(error)", command: command)
        default:
            return CardServiceError(kind: "transport", "\(error)", command: command)
        }
    }

    /// A Keycard error as a structured error; `fallback` names the command when the error does not.
    public static func from(keycard error: KeycardError, command fallback: String?) -> CardServiceError {
        let sw = error.statusWord
        func make(_ kind: String, _ text: String, _ ins: KeycardInstruction? = nil, retries: Int? = nil) -> CardServiceError {
            CardServiceError(kind: kind, text, statusWord: sw, retriesLeft: retries, command: ins.map { "\($0)" } ?? fallback)
        }
        switch error {
        case .wrongPIN(let n):
            return make("wrong_pin", "wrong PIN: \(tries(n))", .verifyPIN, retries: n)
        case .pinBlocked:
            return make("pin_blocked", "PIN blocked: unblock it with the PUK, s:unblock_pin(puk, new_pin)", .verifyPIN, retries: 0)
        case .wrongPUK(let n):
            return make("wrong_puk", "wrong PUK: \(tries(n))", .unblockPIN, retries: n)
        case .pukBlocked:
            return make("puk_blocked", "PUK blocked: only a factory reset brings the card back", .unblockPIN, retries: 0)
        case .noFreePairingSlot:
            return make("no_free_slot", "no free pairing slot: free slots with s:unpair_others() from a paired session, or factory reset the card", .pair)
        case .conditionsNotSatisfied(let ins):
            return make("conditions_not_satisfied", "conditions not satisfied: " + conditionsHint(ins), ins)
        case .wrongData(let ins):
            return make("wrong_data", "the card rejected the data of \(ins)", ins)
        case .incorrectParameters(let ins, _):
            let text = ins == .openSecureChannel
                ? "the card does not know this pairing (slot empty or out of range); pair again"
                : "the card rejected the parameters P1-P2 of \(ins)"
            return make(ins == .openSecureChannel ? "pairing_rejected" : "incorrect_parameters", text, ins)
        case .referencedDataNotFound(let ins):
            let text = ins == .sign ? "no PIN-less path is set; set one with s:set_pinless_path(path)" : "referenced data not found"
            return make("not_found", text, ins)
        case .instructionNotSupported(let ins):
            return make("not_supported", "the card does not support \(ins) in its current state (before INIT only INIT is accepted)", ins)
        case .notInitialized:
            return make("not_initialized", "the card is not initialised; run s:init{pin = ..., puk = ..., pairing_password = ...} first")
        case .alreadyInitialized:
            return make("already_initialized", "the card is already initialised; factory reset it to start over", .initialize)
        case .secureChannelReset(let ins):
            return make("channel_reset", "the card reset the secure channel; open it again with s:open_secure_channel() (and verify the PIN)", ins)
        case .secureChannelNotOpen(let ins):
            return make("channel_not_open", "\(ins) needs an open secure channel: call s:open_secure_channel() or s:auto()", ins)
        case .notPaired:
            return make("not_paired", "no pairing with this card: call s:pair{password = ...} or s:auto()")
        case .pairingCryptogramMismatch:
            return make("wrong_pairing_password", "the card's pairing cryptogram does not match: wrong pairing password", .pair)
        case .untrustedCard(let why):
            return make("untrusted_card", "untrusted card: \(why)")
        case .unknownCA(let key):
            let hex = Hex.encode(key.compressed)
            return CardServiceError(kind: "untrusted_card", "untrusted card: certificate signed by unknown CA \(hex); if you trust that certificate "
                                + "authority, open the card with trusted_ca_keys = { hex.decode \"\(hex)\" }", command: fallback, caKey: key.compressed)
        case .invalidResponse(let ins, let why):
            return make("invalid_response", "invalid answer to \(ins): \(why)", ins)
        case .unsupported(let ins, let applet):
            return make("unsupported", "\(ins) is not offered by applet \(applet)", ins)
        case .unsupportedForm(let ins, let what, let applet):
            return make("unsupported", "\(ins) on applet \(applet) does not take \(what)", ins)
        case .invalidArgument(let why):
            return make("invalid_argument", why)
        case .status(let status, let ins):
            return make("unknown", "the card answered \(status.name ?? "an unknown status word")", ins)
        }
    }

    static func conditionsHint(_ ins: KeycardInstruction) -> String {
        switch ins {
        case .sign: return "SIGN needs the PIN verified and a key loaded"
        case .exportKey:
            return "EXPORT KEY needs the PIN verified and a key loaded; private keys only on EIP-1581 paths (m/43'/60'/1581'/...), extended public keys anywhere else"
        case .unblockPIN: return "UNBLOCK PIN works only while the PIN is blocked"
        case .pair: return "PAIR needs the secure channel closed (select the card first)"
        // The 4.0 applet answers SELECT with 6985 when it holds no identity certificate: a card not
        // personalised by its maker (or a development build), whose genuineness cannot be checked.
        case .select: return "the applet answered SELECT with 6985: it holds no identity certificate (the card was not personalised by its maker, or runs a development build), so nobody can check that it is a genuine Keycard"
        default: return "\(ins) needs the PIN verified (and, for key commands, a key loaded)"
        }
    }
}

extension CardServiceError {
    /// Runs `body`, turning card-stack errors into structured errors (worded for Lua's hints; `CardFrontEnd.mapping` words them for either front end).
    public static func mapping<R>(_ command: String?, _ body: () throws -> R) throws -> R {
        do { return try body() } catch { throw from(error, command: command) }
    }

}
