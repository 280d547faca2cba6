import KeyhostServices
import LuaRuntime

extension DuressPIN {
    /// For `s:init{}`: the service's refusals as a bad argument naming the options.
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
}
