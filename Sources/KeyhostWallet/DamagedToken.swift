/// A token row the wallet cannot read (an edited file, a bad disk block, a newer keyhost's format).
/// It is set aside: listed with its reason and counted, never run, and the rest of the wallet stays usable.
public struct DamagedToken: Error, Equatable, Sendable {
    /// The row's id column, as stored (normally 32 bytes; whatever a damaged row holds).
    public let id: [UInt8]
    /// The row's state column, if it is text.
    public let storedState: String?
    /// What cannot be read, as a phrase ("its token bytes are not a signed token: …").
    public let reason: String
}
