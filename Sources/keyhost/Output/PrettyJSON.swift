import KeyhostRecord

// `--json` documents as Foundation's JSONSerialization wrote them with `.sortedKeys`, `.prettyPrinted` and
// `.withoutEscapingSlashes` (two-space indent, `"key" : value`, `[\n\n]` for an empty array), byte for byte, so
// scripts that read keyhost's output see no change now that keyhost no longer links Foundation (and ICU).
// A test compares the two on generated documents.

/// JSON's `null` among the values `printJSON` takes (NSNull was Foundation's).
struct JSONNull {}

/// Prints a JSON value (dictionaries with sorted keys), one document per call.
func printJSON(_ value: Any) throws {
    print(try PrettyJSON.render(value))
}

/// A value `printJSON` cannot write (a type JSON has no form for, or a number that is not finite).
struct UnprintableJSON: Error, CustomStringConvertible {
    let description: String
}

enum PrettyJSON {
    /// Strings, booleans, integers, finite Doubles and Floats, `JSONNull` or nil, and arrays and `[String: Any]`
    /// dictionaries of them.
    static func render(_ value: Any) throws -> String {
        var out = ""
        try write(value, into: &out, indent: 0)
        return out
    }

    private static func write(_ value: Any, into out: inout String, indent: Int) throws {
        switch value {
        case let text as String: quote(text, into: &out)
        case let flag as Bool: out += flag ? "true" : "false"
        case let n as Int: out += String(n)
        case let n as Int64: out += String(n)
        case let n as Int32: out += String(n)
        case let n as Int16: out += String(n)
        case let n as Int8: out += String(n)
        case let n as UInt64: out += String(n)
        case let n as UInt32: out += String(n)
        case let n as UInt16: out += String(n)
        case let n as UInt8: out += String(n)
        case let n as UInt: out += String(n)
        case let n as Double: try number(n, into: &out)
        case let n as Float: try number(Double(n), into: &out)
        case is JSONNull: out += "null"
        case let optional as OptionalValue:
            if let wrapped = optional.wrapped { try write(wrapped, into: &out, indent: indent) } else { out += "null" }
        case let items as [Any]:
            out += "[\n"
            for (i, item) in items.enumerated() {
                if i > 0 { out += ",\n" }
                out += String(repeating: " ", count: indent + 2)
                try write(item, into: &out, indent: indent + 2)
            }
            out += "\n" + String(repeating: " ", count: indent) + "]"
        case let object as [String: Any]:
            out += "{\n"
            for (i, key) in object.keys.sorted(by: JSONKeyOrder.areInIncreasingOrder).enumerated() {
                if i > 0 { out += ",\n" }
                out += String(repeating: " ", count: indent + 2)
                quote(key, into: &out)
                out += " : "
                try write(object[key]!, into: &out, indent: indent + 2)
            }
            out += "\n" + String(repeating: " ", count: indent) + "}"
        default:
            throw UnprintableJSON(description: "a \(type(of: value)) cannot be printed as JSON")
        }
    }

    /// Shortest round-trip digits, without a trailing ".0" (1.5, 2, 1e+20).
    private static func number(_ n: Double, into out: inout String) throws {
        guard n.isFinite else { throw UnprintableJSON(description: "\(n) cannot be printed as a JSON number") }
        var text = n.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out += text
    }

    private static func quote(_ text: String, into out: inout String) {
        JSONString.append(text, to: &out, namingBackspaceAndFormFeed: true)
    }
}

/// An Optional seen through `Any`, so nil prints as null.
private protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrapped: Any? { self.map { $0 as Any } }
}

/// The key order of Foundation's JSONSerialization with `.sortedKeys`: NSString's compare with `.numeric`,
/// `.caseInsensitive` and `.forcedOrdering`, which follows Unicode collation (ICU root) — punctuation, then numbers
/// by value, then letters without case; ties go to fewer leading zeros, then lower case first.
/// Exact for ASCII keys (every key keyhost prints); other scalars sort after ASCII by code point.
enum JSONKeyOrder {
    /// Collation order of ASCII punctuation and symbols in ICU's root collation.
    private static let punctuation = Array(" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".unicodeScalars)

    private enum Element {
        case punctuation(Int)
        case number(digits: Substring, zeros: Int)
        case letter(folded: UInt32, upper: Bool)
        case other(UInt32)
    }

    static func areInIncreasingOrder(_ a: String, _ b: String) -> Bool {
        let x = elements(a), y = elements(b)
        if let primary = comparePrimary(x, y) { return primary }
        // Primary-equal (same length and kinds): fewer leading zeros first, then lower case first, then code points.
        for (p, q) in zip(x, y) {
            if case .number(_, let zp) = p, case .number(_, let zq) = q, zp != zq { return zp < zq }
        }
        for (p, q) in zip(x, y) {
            if case .letter(_, let up) = p, case .letter(_, let uq) = q, up != uq { return !up }
        }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    }

    /// nil when the two are equal at the primary level.
    private static func comparePrimary(_ x: [Element], _ y: [Element]) -> Bool? {
        for (p, q) in zip(x, y) {
            let (cp, cq) = (rank(p), rank(q))
            if cp != cq { return cp < cq }
            switch (p, q) {
            case (.punctuation(let i), .punctuation(let j)) where i != j: return i < j
            case (.number(let d, _), .number(let e, _)) where d != e:
                return d.count != e.count ? d.count < e.count : d < e
            case (.letter(let f, _), .letter(let g, _)) where f != g: return f < g
            case (.other(let f), .other(let g)) where f != g: return f < g
            default: continue
            }
        }
        return x.count == y.count ? nil : x.count < y.count
    }

    private static func rank(_ element: Element) -> Int {
        switch element {
        case .punctuation: return 0
        case .number: return 1
        case .letter: return 2
        case .other: return 3
        }
    }

    private static func elements(_ text: String) -> [Element] {
        var out = [Element]()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let s = scalars[i]
            switch s.value {
            case 0x30...0x39:
                var j = i
                while j < scalars.count, (0x30...0x39).contains(scalars[j].value) { j += 1 }
                let run = String(String.UnicodeScalarView(scalars[i..<j]))
                let significant = run.drop { $0 == "0" }
                let digits = significant.isEmpty ? Substring("0") : significant
                out.append(.number(digits: digits, zeros: run.count - digits.count))
                i = j
                continue
            case 0x41...0x5A: out.append(.letter(folded: s.value + 0x20, upper: true))
            case 0x61...0x7A: out.append(.letter(folded: s.value, upper: false))
            default:
                if let index = punctuation.firstIndex(of: s) { out.append(.punctuation(index)) } else { out.append(.other(s.value)) }
            }
            i += 1
        }
        return out
    }
}
