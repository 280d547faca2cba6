import LuaRuntime

/// Checks on INIT's PINs (`s:init{}` and `keyhost card init`). The applet always has a duress PIN that opens a
/// decoy wallet (chain code SHA-256 of the real one) and wins when both PINs match; KeycardCommandSet.initialize
/// sends an unguessable one unless the user gives one. These refuse the choices that would still let the user's
/// own PIN open the decoy.
enum DuressPIN {
    enum Problem {
        /// The duress PIN given equals the PIN.
        case duressEqualsPIN
        /// The PUK starts with the PIN (a 3.2 card's default duress PIN is the PUK's first six digits).
        case pukStartsWithPIN
    }

    static func problem(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) -> Problem? {
        if let duress, duress == pin { return .duressEqualsPIN }
        // A 3.2 card defaults the duress PIN to the PUK's first six digits (its own INIT, or another
        // tool's): with such a PUK the PIN could open the decoy. Refused for every applet, to be safe.
        if puk.count >= 6, Array(puk.prefix(6)) == pin { return .pukStartsWithPIN }
        return nil
    }

    /// For `s:init{}`: a bad argument naming the options.
    static func check(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) throws {
        switch problem(pin: pin, puk: puk, duress: duress) {
        case .duressEqualsPIN:
            throw LuaArgumentError(2, "option 'duress_pin' equals 'pin': the card would open the duress wallet with your PIN; choose another duress PIN or leave it out")
        case .pukStartsWithPIN:
            throw LuaArgumentError(2, "option 'puk' starts with the PIN: a 3.2 card's default duress PIN is the PUK's first six digits, so your PIN could open the duress wallet; choose a PUK that does not start with the PIN")
        case nil:
            return
        }
    }

    /// For `keyhost card init`: the same refusals naming the environment variables.
    static func checkCommandLine(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) throws {
        switch problem(pin: pin, puk: puk, duress: duress) {
        case .duressEqualsPIN:
            throw CardLuaError(kind: "invalid_argument", "the duress PIN (KEYHOST_DURESS_PIN) equals the PIN: the card would open the duress wallet with your PIN; choose another duress PIN or leave it out")
        case .pukStartsWithPIN:
            throw CardLuaError(kind: "invalid_argument", "the PUK starts with the PIN: a 3.2 card's default duress PIN is the PUK's first six digits, so your PIN could open the duress wallet; choose a PUK that does not start with the PIN")
        case nil:
            return
        }
    }
}
