/// A value in a command's result: what `keyhost card … --json` prints under the Lua result table's name.
public enum CardValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int)
    case text(String)
    /// Printed as lowercase hex.
    case bytes([UInt8])
    case integers([Int])

    static func optional(_ bytes: [UInt8]?) -> CardValue { bytes.map { .bytes($0) } ?? .null }
    static func optional(_ number: Int?) -> CardValue { number.map { .integer($0) } ?? .null }
}

/// One named field of a result.
public struct CardField: Sendable, Equatable {
    /// snake_case, the name the Lua result table uses (`pin_retries`, `key_uid`, …).
    public let name: String
    public let value: CardValue

    public init(_ name: String, _ value: CardValue) {
        self.name = name
        self.value = value
    }
}

/// A command's result, fields in the order they are printed.
public struct CardResult: Sendable, Equatable {
    public var fields: [CardField]

    public init(_ fields: [CardField] = []) { self.fields = fields }

    public subscript(name: String) -> CardValue? {
        fields.first { $0.name == name }?.value
    }

    mutating func append(_ name: String, _ value: CardValue) { fields.append(CardField(name, value)) }
}
