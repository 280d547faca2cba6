import LuaRuntime

/// The answer of a Lua usage function (`lua:SCRIPT` on the command line, `source = function` in
/// `discovery.scan`), checked strictly: anything but one boolean per address asked stops the scan, because
/// reading a short list or a string as "unused" or "used" would silently end the gap in the wrong place.
public enum UsageAnswer {
    /// Why an answer was refused; the text starts with "usage function:".
    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
        init(_ detail: String) { description = "usage function: " + detail }
    }

    /// The flags `value` gives for `addresses`: a sequence of exactly as many booleans, in order. With
    /// `allowSet`, also a set `{[address] = true|false}` without a list part (`{}` is the empty set).
    public static func flags(_ value: LuaValue, for addresses: [String], allowSet: Bool) throws -> [Bool] {
        let expected = allowSet ? "a list of booleans (one per address) or a set {[address] = true}" : "a list of booleans, one per address"
        guard case .table(let table) = value else {
            throw Malformed("returned \(described(value)), expected \(expected)")
        }
        let isSet = table.array.isEmpty && !table.fields.keys.contains { if case .integer = $0 { true } else { false } }
        if allowSet && isSet { return try setFlags(table, for: addresses) }
        let answers = table.array.count + table.fields.count
        guard answers == addresses.count else {
            throw Malformed("returned \(answers) answers for \(addresses.count) addresses; return one boolean per address, in order")
        }
        return try addresses.indices.map { offset in
            switch table[offset + 1] {
            case .boolean(let used): return used
            case let other: throw Malformed("answer #\(offset + 1) is \(described(other)), expected a boolean")
            }
        }
    }

    private static func setFlags(_ table: LuaTable, for addresses: [String]) throws -> [Bool] {
        for (key, value) in table.fields {
            guard case .boolean = value else {
                let name = key.stringValue.map { String($0.prefix(20)).debugDescription } ?? key.typeName
                throw Malformed("set entry [\(name)] is \(described(value)), expected true or false")
            }
        }
        return addresses.map { table.fields[.text($0)] == .boolean(true) }
    }

    /// "a string", "an integer"-style wording for a value's Lua type; "nil" alone.
    private static func described(_ value: LuaValue) -> String {
        let type = value.typeName
        return type == "nil" ? "nil" : ("aeiou".contains(type.first ?? "x") ? "an " : "a ") + type
    }
}
