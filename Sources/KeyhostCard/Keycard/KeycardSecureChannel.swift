/// An open encrypted session with a card: wraps commands and unwraps answers.
public protocol KeycardSecureChannel: AnyObject {
    var version: SecureChannelVersion { get }
    var isOpen: Bool { get }
    /// The command to transmit in place of `apdu`.
    func wrap(_ apdu: CommandAPDU) throws -> CommandAPDU
    /// The inner answer (data and the card's real status word). An outer status other than 9000 closes
    /// the session and is returned as it is; a response that fails authentication closes it and throws.
    func unwrap(_ response: ResponseAPDU, for command: CommandAPDU) throws -> ResponseAPDU
    /// Forgets the session keys.
    func close()
}
