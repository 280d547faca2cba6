import KeyhostRecord
/// Why a token was refused, naming the field and what to do.
public struct TokenError: Error, Equatable, CustomStringConvertible {
    /// A short machine-readable kind: `encoding`, `field`, `signature`, `armor`, `limit`.
    public let kind: String
    public let message: String

    public init(_ kind: String, _ message: String) {
        self.kind = kind
        self.message = message
    }

    static func field(_ name: String, _ problem: String) -> TokenError {
        TokenError("field", "token field '\(name)': \(problem)")
    }

    public var description: String { message }
}

extension TokenError: StructuredError {
    public var errorKind: String { kind }
}
