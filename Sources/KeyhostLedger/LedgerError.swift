import KeyhostRecord
/// Why a deposit or a ledger operation was refused, with a message for the user.
public struct LedgerError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A short machine-readable kind: `invalid_chain`, `unknown_issuer`, `not_deposit`, `expired`,
    /// `not_yet_valid`, `future_time`, `issuer_conflict`, `limit`, `store`, `permissions`, `location`.
    public let kind: String
    /// A sentence for the user: what happened and, where there is one, what to do.
    public let message: String
    /// The position of the chain in the deposited batch that the error is about, if any.
    public let index: Int?

    /// The message without its "chain N:" prefix.
    let detail: String

    public init(kind: String, message: String, index: Int? = nil) {
        self.init(kind: kind, message: message, index: index, detail: message)
    }

    init(kind: String, message: String, index: Int?, detail: String) {
        self.kind = kind
        self.message = message
        self.index = index
        self.detail = detail
    }

    /// An error another process reported (a ledger service, a `keyhost-ledger` child): its
    /// "chain N: " prefix is recognised, so `shifted(by:)` renumbers it as it would a local one.
    public init(received kind: String, message: String, index: Int?) {
        let prefix = index.map { "chain \($0): " }
        if let prefix, message.hasPrefix(prefix) {
            self.init(kind: kind, message: message, index: index, detail: String(message.dropFirst(prefix.count)))
        } else {
            self.init(kind: kind, message: message, index: index)
        }
    }

    public var description: String { message }

    public static func store(_ message: String) -> LedgerError { LedgerError(kind: "store", message: message) }

    /// The same error about chain `index` of the batch.
    func at(_ index: Int) -> LedgerError {
        LedgerError(kind: kind, message: "chain \(index): \(message)", index: index, detail: message)
    }

    /// The same error for a batch that started `offset` chains into a longer list.
    public func shifted(by offset: Int) -> LedgerError {
        guard let index, offset != 0 else { return self }
        return LedgerError(kind: kind, message: "chain \(index + offset): \(detail)", index: index + offset, detail: detail)
    }
}

extension LedgerError: StructuredError {
    public var errorKind: String { kind }
    /// `index`: the failing chain's position in a batch, counted from 1 as both front ends show it.
    public var errorFields: [(String, Record)] { index.map { [("index", .integer(Int64($0) + 1))] } ?? [] }
}
