/// Checks on INIT's PINs, for both front ends (each words its own refusals). The applet always has a duress PIN that opens a
/// decoy wallet (chain code SHA-256 of the real one) and wins when both PINs match; KeycardCommandSet.initialize
/// sends an unguessable one unless the user gives one. These refuse the choices that would still let the user's
/// own PIN open the decoy.
public enum DuressPIN {
    /// What makes a choice of PINs unsafe.
    public enum Problem {
        /// The duress PIN given equals the PIN.
        case duressEqualsPIN
        /// The PUK starts with the PIN (a 3.2 card's default duress PIN is the PUK's first six digits).
        case pukStartsWithPIN
    }

    /// The problem with these INIT secrets, or nil when the user's PIN cannot open the decoy.
    public static func problem(pin: [UInt8], puk: [UInt8], duress: [UInt8]?) -> Problem? {
        if let duress, duress == pin { return .duressEqualsPIN }
        // A 3.2 card defaults the duress PIN to the PUK's first six digits (its own INIT, or another
        // tool's): with such a PUK the PIN could open the decoy. Refused for every applet, to be safe.
        if puk.count >= 6, Array(puk.prefix(6)) == pin { return .pukStartsWithPIN }
        return nil
    }
}
