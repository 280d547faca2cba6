/// A field type: atomic, dynamic, a struct or an array of any of them.
indirect enum FieldType: Equatable, Sendable {
    case uint(Int), int(Int), bool, address, fixedBytes(Int)
    case string, bytes
    case structure(String)
    case array(FieldType, length: Int?)

    var structName: String? {
        switch self {
        case .structure(let name): return name
        case .array(let element, _): return element.structName
        default: return nil
        }
    }

    var written: String {
        switch self {
        case .uint(let n): return "uint\(n)"
        case .int(let n): return "int\(n)"
        case .bool: return "bool"
        case .address: return "address"
        case .fixedBytes(let n): return "bytes\(n)"
        case .string: return "string"
        case .bytes: return "bytes"
        case .structure(let name): return name
        case .array(let element, let length): return element.written + "[" + (length.map(String.init) ?? "") + "]"
        }
    }

    static func parse(_ text: String, structs: Set<String>) throws -> FieldType {
        guard text.utf8.count <= 256 else { throw TypedDataError("type name of \(text.utf8.count) characters is too long") }
        if text.hasSuffix("]") {
            guard let open = text.lastIndex(of: "[") else { throw TypedDataError("type '\(text)' has ']' without '['") }
            let inner = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
            let element = try parse(String(text[..<open]), structs: structs)
            if inner.isEmpty { return .array(element, length: nil) }
            guard inner.allSatisfy({ $0.isASCII && $0.isNumber }), inner.first != "0", inner.count <= 7, let n = Int(inner), n <= TypedData.maxArrayLength else {
                throw TypedDataError("array length '[\(inner)]' in '\(text)' must be a number from 1 to \(TypedData.maxArrayLength), or empty")
            }
            return .array(element, length: n)
        }
        switch text {
        case "bool": return .bool
        case "address": return .address
        case "string": return .string
        case "bytes": return .bytes
        default: break
        }
        for (prefix, make) in [("uint", FieldType.uint), ("int", FieldType.int)] where text.hasPrefix(prefix) {
            let digits = text.dropFirst(prefix.count)
            guard !digits.isEmpty else { throw TypedDataError("'\(text)' has no size; write \(prefix)256 (EIP-712 has no \(prefix) alias)") }
            if digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
                guard digits.first != "0", let bits = Int(digits), bits % 8 == 0, (8...256).contains(bits) else {
                    throw TypedDataError("'\(text)' is not a valid size; use \(prefix)8, \(prefix)16, … \(prefix)256")
                }
                return make(bits)
            }
        }
        if text.hasPrefix("bytes"), case let digits = text.dropFirst(5), digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard digits.first != "0", let n = Int(digits), (1...32).contains(n) else { throw TypedDataError("'\(text)' is not valid; use bytes1 … bytes32 or bytes") }
            return .fixedBytes(n)
        }
        guard structs.contains(text) else {
            throw TypedDataError("type '\(text)' is not defined; define it under types or fix the spelling "
                                 + "(atomic types: bool, address, string, bytes, bytes1…bytes32, uint8…uint256, int8…int256)")
        }
        return .structure(text)
    }
}
