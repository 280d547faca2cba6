import Foundation
import Testing
@testable import keyhost

/// `--json` output without Foundation: byte for byte what JSONSerialization wrote before keyhost dropped Foundation
/// (documents scripts already parse, and the examples in docs/json.md).
@Suite("JSON output as JSONSerialization wrote it")
struct JSONOutputTests {
    static func foundation(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes, .fragmentsAllowed]),
               as: UTF8.self)
    }

    /// The same document twice: for keyhost's renderer (JSONNull) and for Foundation (NSNull).
    static func document(depth: Int, using generator: inout SystemRandomNumberGenerator) -> (Any, Any) {
        let keyAlphabet = Array("abcxyzABZ019_- .$/")
        func key() -> String { String((0..<Int.random(in: 1...6, using: &generator)).map { _ in keyAlphabet.randomElement(using: &generator)! }) }
        let choice = Int.random(in: 0..<(depth > 2 ? 6 : 8), using: &generator)
        switch choice {
        case 0:
            var scalars = String.UnicodeScalarView()
            let pool: [Unicode.Scalar] = ["a", "/", "\\", "\"", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{c}", "\u{1f}", "\u{7f}", "é", "😀", "\u{2028}"]
            for _ in 0..<Int.random(in: 0...6, using: &generator) { scalars.append(pool.randomElement(using: &generator)!) }
            return (String(scalars), String(scalars))
        case 1: let n = Int.random(in: Int.min...Int.max, using: &generator); return (n, n)
        case 2: let b = Bool.random(using: &generator); return (b, b)
        case 3: return (JSONNull(), NSNull())
        case 4:
            let d = [0.0, 1.5, -2.0, 1e20, 0.1, 123456789.125, 1e-7, Double.random(in: -1e6...1e6, using: &generator)].randomElement(using: &generator)!
            return (d, d)
        case 5: let n = UInt64.random(in: 0...UInt64.max, using: &generator); return (n, n)
        case 6:
            var ours = [Any](), theirs = [Any]()
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let (a, b) = document(depth: depth + 1, using: &generator)
                ours.append(a); theirs.append(b)
            }
            return (ours, theirs)
        default:
            var ours = [String: Any](), theirs = [String: Any]()
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let (a, b) = document(depth: depth + 1, using: &generator)
                let name = key()
                ours[name] = a; theirs[name] = b
            }
            return (ours, theirs)
        }
    }

    @Test("2 000 generated documents print exactly as JSONSerialization printed them")
    func generatedDocuments() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let (ours, theirs) = Self.document(depth: 0, using: &generator)
            let expected = try Self.foundation(theirs)
            let actual = try PrettyJSON.render(ours)
            #expect(actual == expected)
            if actual != expected { break }
        }
    }

    @Test("Keys sort as JSONSerialization sorted them (Unicode collation: punctuation, numbers by value, letters without case)")
    func keyOrder() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = (0x20...0x7E).map { Character(Unicode.Scalar($0)!) } + Array("aAbB0100_")
        for _ in 0..<3_000 {
            var object = [String: Any]()
            for _ in 0..<8 {
                object[String((0..<Int.random(in: 1...5, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })] = 0
            }
            let expected = try Self.foundation(object)
            let actual = try PrettyJSON.render(object)
            #expect(actual == expected)
            if actual != expected { break }
        }
    }

    @Test("The shapes keyhost prints: empty containers, nested objects, optionals as null")
    func knownShapes() throws {
        let missing: String? = nil
        #expect(try PrettyJSON.render([Int8(-8), Int16(-16), Int32(-32), UInt8(8), UInt16(16), UInt32(32), UInt(7), Float(0.5)]) ==
                "[\n  -8,\n  -16,\n  -32,\n  8,\n  16,\n  32,\n  7,\n  0.5\n]")
        #expect(try PrettyJSON.render(["a": [Any](), "b": [String: Any](), "c": [1, [2]]]) == "{\n  \"a\" : [\n\n  ],\n  \"b\" : {\n\n  },\n  \"c\" : [\n    1,\n    [\n      2\n    ]\n  ]\n}")
        #expect(try PrettyJSON.render(["pin_retries": JSONNull(), "pin": missing as Any, "path": "m/84'/0'"]) ==
                "{\n  \"path\" : \"m/84'/0'\",\n  \"pin\" : null,\n  \"pin_retries\" : null\n}")
    }

    @Test("What JSON cannot hold is an error naming it, not a crash")
    func unprintable() {
        #expect(throws: UnprintableJSON.self) { try PrettyJSON.render(["x": Double.nan]) }
        #expect(throws: UnprintableJSON.self) { try PrettyJSON.render([1: "x"]) }
        #expect(throws: UnprintableJSON.self) { try PrettyJSON.render(["x": Date()]) }
    }

    @Test("printf-style decimals as String(format:) wrote them")
    func decimals() {
        for value in [0.0, 0.05, 0.15, 0.25, 2.5, 3.5, -0.5, 1234.5678, 1e15, 99.95, Double.infinity, .nan, 1.7976931348623157e308] {
            for digits in [0, 1, 2] {
                #expect(CFormat.fixed(value, digits: digits) == String(format: "%.\(digits)f", value), "\(value) \(digits)")
            }
        }
    }
}
