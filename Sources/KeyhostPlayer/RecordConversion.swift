import KeyhostTokens
import LuaRuntime

/// Lua values to and from the CBOR a token run takes in (arguments, token fields) and gives out
/// (emitted records). Records are JSON-like: booleans, integers, strings, arrays and maps with
/// string or integer keys. Floats are refused: amounts are integers in a unit's smallest
/// denomination, and a float's text differs between languages.
public enum RecordConversion {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A Lua value as CBOR; `path` names where in the record a bad value sits.
    public static func cbor(_ value: LuaValue, path: String = "record", depth: Int = 0) throws -> CBORValue {
        guard depth <= TokenLimits.maxDepth else { throw Failure(description: "\(path) is nested deeper than \(TokenLimits.maxDepth) levels") }
        switch value {
        case .nil: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let n): return .int(n)
        case .number(let x):
            throw Failure(description: "\(path) is the float \(x): records hold integers (amounts in the smallest unit; use // to divide)")
        case .string(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
            return .bytes(bytes)
        case .table(let table):
            if table.fields.isEmpty {
                return .array(try table.array.enumerated().map { try cbor($1, path: "\(path)[\($0 + 1)]", depth: depth + 1) })
            }
            var pairs: [CBORPair] = []
            for (index, element) in table.array.enumerated() {
                pairs.append(CBORPair(.int(Int64(index + 1)), try cbor(element, path: "\(path)[\(index + 1)]", depth: depth + 1)))
            }
            for (key, element) in table.fields {
                let name: CBORValue
                let shown: String
                switch key {
                case .integer(let n): name = .int(n); shown = "\(path)[\(n)]"
                case .string(let bytes):
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        throw Failure(description: "\(path) has a key that is not UTF-8 text")
                    }
                    name = .text(text); shown = "\(path).\(text.prefix(40))"
                default: throw Failure(description: "\(path) has a key of type \(key.typeName): keys must be strings or integers")
                }
                pairs.append(CBORPair(name, try cbor(element, path: shown, depth: depth + 1)))
            }
            // Sorted as the encoding will be, so equal records are equal values too.
            return .map(pairs.sorted { CBOREncoder.encode($0.key).lexicographicallyPrecedes(CBOREncoder.encode($1.key)) })
        case .reference(let ref) where ref.typeName == "table":
            throw Failure(description: "\(path) is a table with a metatable: records hold plain tables")
        case .reference(let ref):
            throw Failure(description: "\(path) is a \(ref.typeName): records hold booleans, integers, strings and tables")
        }
    }

    /// CBOR as a Lua value: byte and text strings become strings, null becomes nil.
    public static func lua(_ value: CBORValue) -> LuaValue {
        switch value {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? .integer(Int64(n)) : .text(String(n))
        case .negative(let n): return n <= UInt64(Int64.max) ? .integer(-Int64(n) - 1) : .text(CBORValue.negative(n).diagnostic)
        case .bytes(let b): return .string(b)
        case .text(let t): return .text(t)
        case .bool(let b): return .boolean(b)
        case .null: return .nil
        case .array(let items): return .table(LuaTable(array: items.map(lua)))
        case .map(let pairs):
            var table = LuaTable()
            for pair in pairs {
                let key = lua(pair.key)
                if !key.isNil { table.fields[key] = lua(pair.value) }
            }
            return .table(table)
        }
    }
}
