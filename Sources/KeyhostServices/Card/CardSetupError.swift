import KeyhostRecord
/// Why a card session could not be opened (no reader, a blank card, …); the text is for the user,
/// the kind (`no_reader`, `not_initialized`, `no_key`, `invalid_argument`) for `--json` and Lua's error table.
public struct CardSetupError: Error, CustomStringConvertible {
    /// `no_reader`, `not_initialized`, `no_key`, `invalid_argument`.
    public let kind: String
    /// The message for the user.
    public let description: String

    /// A set-up failure of `kind`, told by `description`.
    public init(_ description: String, kind: String) {
        self.kind = kind
        self.description = description
    }
}

extension CardSetupError: StructuredError {
    public var errorKind: String { kind }
}
