import KeyhostRecord

// The Ethereum errors as both front ends show them: `--json`'s error object and Lua's error table carry the
// kind, the message, and the field or byte offset when there is one. Transactions and documents hold no
// secrets, so every field may be shown.

extension TransactionError: StructuredError {
    public var errorKind: String { kind }
    public var errorFields: [(String, Record)] {
        [fieldName.map { ("field", .string($0)) }, offset.map { ("offset", .integer(Int64($0))) }].compactMap { $0 }
    }
}

extension RLPError: StructuredError {
    public var errorKind: String { kind }
    public var errorFields: [(String, Record)] { [("offset", .integer(Int64(offset)))] }
}

extension TypedDataError: StructuredError {
    public var errorKind: String { kind }
}
