/// What an applet on a card says it is when selected: its family, its version and its state, in words a user
/// reads in `keyhost card list` and `card info`.
public struct CardIdentity: Sendable, Equatable {
    public let family: CardFamily
    /// The applet's version as it gives it ("3.2", "0.12-0.5", "1").
    public let version: String
    /// Where the card is in its life: "blank", "initialised, no key", "ready", "slot 3 of 10 sealed", ….
    public let state: String

    public init(family: CardFamily, version: String, state: String) {
        self.family = family
        self.version = version
        self.state = state
    }

    /// "Keycard 3.2 (ready)".
    public var summary: String { "\(family) \(version) (\(state))" }
}
