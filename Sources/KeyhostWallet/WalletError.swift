import KeyhostRecord
/// Why a wallet operation was refused, with a message for the user.
public struct WalletError: Error, Equatable, CustomStringConvertible {
    /// A short machine-readable kind: `already_spent`, `running`, `not_found`, `ambiguous`, `conflict`,
    /// `store`, `permissions`, `invalid`.
    public let kind: String
    /// A sentence for the user: what happened and, where there is one, what to do.
    public let message: String

    /// An error of `kind` with `message`.
    public init(kind: String, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message, as the user sees it.
    public var description: String { message }

    static func alreadySpent(_ message: String) -> WalletError { WalletError(kind: "already_spent", message: message) }
    static func running(_ message: String) -> WalletError { WalletError(kind: "running", message: message) }
    static func notFound(_ message: String) -> WalletError { WalletError(kind: "not_found", message: message) }
    static func ambiguous(_ message: String) -> WalletError { WalletError(kind: "ambiguous", message: message) }
    static func conflict(_ message: String) -> WalletError { WalletError(kind: "conflict", message: message) }
    static func store(_ message: String) -> WalletError { WalletError(kind: "store", message: message) }
    static func permissions(_ message: String) -> WalletError { WalletError(kind: "permissions", message: message) }
    static func invalid(_ message: String) -> WalletError { WalletError(kind: "invalid", message: message) }
}

extension WalletError: StructuredError {
    public var errorKind: String { kind }
}
