/// A result as both Lua and `--json` see it: one definition of a result's names, so a Lua table and the
/// command line's JSON never drift apart. `null` is kept (JSON prints it; Lua drops the key, as Lua must).
public indirect enum Record: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    /// Bytes: lowercase hex in JSON, a byte string in Lua.
    case bytes([UInt8])
    case array([Record])
    /// Fields in the order given; JSON sorts them by name.
    case object([(String, Record)])

    public static func == (a: Record, b: Record) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// An integer field, or null.
    public static func integer<T: BinaryInteger>(_ value: T?) -> Record {
        guard let value, let exact = Int64(exactly: value) else { return .null }
        return .integer(exact)
    }

    /// A text field, or null.
    public static func string(_ value: String?) -> Record { value.map { .string($0) } ?? .null }

    /// The field called `name` of an object.
    public subscript(name: String) -> Record? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == name }?.1
    }
}
