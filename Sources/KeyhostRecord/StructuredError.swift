/// An error both front ends show alike: a kind scripts branch on, a message people read, and named fields
/// (`input`, `sw`, `retries_left`, …). `--json` prints `{"error": {"kind", "message", …fields}}`; Lua raises a
/// table with the same names (null fields left out) whose `tostring` is the message.
public protocol StructuredError: Error, CustomStringConvertible {
    /// Stable machine-readable name: `wrong_pin`, `invalid_psbt`, `double_spend`, …
    var errorKind: String { get }
    /// Fields beyond kind and message, under the names both front ends use.
    var errorFields: [(String, Record)] { get }
}

extension StructuredError {
    public var errorFields: [(String, Record)] { [] }

    /// Kind, fields and message as one record (the `error` object of `--json`).
    public var errorRecord: Record {
        .object([("kind", .string(errorKind))] + errorFields.filter { $0.0 != "kind" && $0.0 != "message" }
                + [("message", .string(description))])
    }
}
