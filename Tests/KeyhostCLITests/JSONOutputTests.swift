import Foundation
import KeyhostRecord
import Testing
@testable import keyhost

/// `--json` output: one writer (`Record.json`) for every command. Foundation's parser is the independent reader
/// here: whatever the writer prints must parse back to the values it was given.
@Suite("JSON output")
struct JSONOutputTests {
    /// Whether what Foundation parsed is the value the record stands for (bytes as lowercase hex).
    static func matches(_ parsed: Any, _ record: Record) -> Bool {
        switch record {
        case .null: return parsed is NSNull
        case .bool(let b): return (parsed as? Bool) == b
        case .integer(let n): return (parsed as? NSNumber)?.int64Value == n && "\(parsed)" == String(n)
        case .number(let d):
            // swift-corelibs-foundation's parser misses the last digits of some shortest round-trip decimals
            // (Python's reads them exactly); a 1e-9 relative slack still catches a wrong or truncated number.
            guard let read = (parsed as? NSNumber)?.doubleValue else { return false }
            return read == d || abs(read - d) <= abs(d) * 1e-9
        case .string(let s): return (parsed as? String) == s
        case .bytes(let b): return (parsed as? String) == b.map { String(format: "%02x", $0) }.joined()
        case .array(let items):
            guard let list = parsed as? [Any], list.count == items.count else { return false }
            return zip(list, items).allSatisfy { matches($0, $1) }
        case .object(let fields):
            guard let object = parsed as? [String: Any], object.count == fields.count else { return false }
            return fields.allSatisfy { name, value in object[name].map { matches($0, value) } ?? false }
        }
    }

    /// A random record: every kind, keys and strings with quotes, backslashes and control characters.
    static func document(depth: Int, using generator: inout SystemRandomNumberGenerator) -> Record {
        let keyAlphabet = Array("abcxyzABZ019_- .$/\"\\\u{7f}\u{1}é")
        func key() -> String { String((0..<Int.random(in: 1...6, using: &generator)).map { _ in keyAlphabet.randomElement(using: &generator)! }) }
        switch Int.random(in: 0..<(depth > 2 ? 6 : 8), using: &generator) {
        case 0:
            var scalars = String.UnicodeScalarView()
            let pool: [Unicode.Scalar] = ["a", "/", "\\", "\"", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{c}", "\u{1b}", "\u{7f}", "é", "😀", "\u{2028}"]
            for _ in 0..<Int.random(in: 0...6, using: &generator) { scalars.append(pool.randomElement(using: &generator)!) }
            return .string(String(scalars))
        case 1: return .integer(Int64.random(in: .min ... .max, using: &generator))
        case 2: return .bool(Bool.random(using: &generator))
        case 3: return .null
        case 4:
            return .number([0.0, 1.5, -2.0, 1e20, 0.1, 123456789.125, 1e-7, Double.random(in: -1e6...1e6, using: &generator)].randomElement(using: &generator)!)
        case 5: return .bytes((0..<Int.random(in: 0...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 6: return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in document(depth: depth + 1, using: &generator) })
        default:
            var fields = [(String, Record)]()
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let name = key()
                guard !fields.contains(where: { $0.0 == name }) else { continue }
                fields.append((name, document(depth: depth + 1, using: &generator)))
            }
            return .object(fields)
        }
    }

    @Test("2 000 generated records, pretty and compact, parse back (JSONSerialization) to what was written")
    func generatedDocuments() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let record = Self.document(depth: 0, using: &generator)
            for pretty in [true, false] {
                let text = record.json(pretty: pretty)
                let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
                #expect(Self.matches(parsed, record), "\(text)")
                // No raw control byte reaches a terminal.
                #expect(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }, "\(text)")
            }
        }
    }

    @Test("One layout: sorted keys, `\"k\": v`, two-space indent, empty containers on one line")
    func knownShapes() {
        let record: Record = ["b": [:], "a": [], "c": [1, [2]], "pin_retries": nil, "path": "m/84'/0'", "id": .bytes([0xAB, 0x01])]
        #expect(record.json() == """
            {
              "a": [],
              "b": {},
              "c": [
                1,
                [
                  2
                ]
              ],
              "id": "ab01",
              "path": "m/84'/0'",
              "pin_retries": null
            }
            """)
        #expect(record.json(pretty: false) == #"{"a": [], "b": {}, "c": [1, [2]], "id": "ab01", "path": "m/84'/0'", "pin_retries": null}"#)
        #expect(Record.string("\u{1b}[2J\u{7f}\u{8}").json() == #""\u001b[2J\u007f\u0008""#)
        #expect(Record.number(.nan).json() == "null")
    }

    @Test("Numbers JSON readers cannot hold exactly stay text: unsigned amounts above 2^63-1, uint256 fields")
    func wideNumbers() {
        #expect(Record.unsigned(UInt64(Int64.max)).json() == "9223372036854775807")
        #expect(Record.unsigned(UInt64.max).json() == #""18446744073709551615""#)
        #expect(Record(json: .number("115792089237316195423570985008687907853269984665640564039457584007913129639935")).json()
                == #""115792089237316195423570985008687907853269984665640564039457584007913129639935""#)
        #expect(Record(json: .number("-12")).json() == "-12")
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
