import LuaRuntime

/// Checks on `s:init{}`'s PINs. The applet always has a duress PIN that opens a decoy wallet (chain code
/// SHA-256 of the real one) and wins when both PINs match; KeycardCommandSet.initialize sends an
/// unguessable one unless the user gives `duress_pin`. These refuse the choices that would still let
/// the user's own PIN open the decoy.
enum DuressPIN {
    static func check(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) throws {
        if let duress, duress == pin {
            throw LuaArgumentError(2, "option 'duress_pin' equals 'pin': the card would open the duress wallet with your PIN; choose another duress PIN or leave it out")
        }
        // A 3.2 card defaults the duress PIN to the PUK's first six digits (its own INIT, or another
        // tool's): with such a PUK the PIN could open the decoy. Refused for every applet, to be safe.
        if puk.count >= 6, Array(puk.prefix(6)) == pin {
            throw LuaArgumentError(2, "option 'puk' starts with the PIN: a 3.2 card's default duress PIN is the PUK's first six digits, so your PIN could open the duress wallet; choose a PUK that does not start with the PIN")
        }
    }
}
