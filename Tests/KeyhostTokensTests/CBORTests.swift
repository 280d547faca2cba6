import Foundation
import KeyhostTestSupport
import Testing
@testable import KeyhostTokens

/// Deterministic CBOR against RFC 8949's examples, a list of encodings it must refuse, and cbor2.
@Suite struct CBORTests {
    struct Vectors: Decodable {
        struct Good: Decodable { let hex: String; let value: JSONValue }
        struct Bad: Decodable { let hex: String; let why: String }
        let deterministic: [Good]
        let refused: [Bad]
    }

    /// The vector file's value notation.
    indirect enum JSONValue: Decodable {
        case value(CBORValue)

        init(from decoder: Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { self = .value(.null); return }
            if let b = try? single.decode(Bool.self) { self = .value(.bool(b)); return }
            let object = try single.decode([String: Raw].self)
            guard let (kind, raw) = object.first, object.count == 1 else { throw DecodingError.dataCorruptedError(in: single, debugDescription: "one key expected") }
            self = .value(try raw.cbor(kind: kind))
        }

        var cbor: CBORValue { if case .value(let v) = self { return v } else { return .null } }
    }

    enum Raw: Decodable {
        case string(String), number(Int), list([JSONValue]), pairs([[JSONValue]])
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) { self = .string(s) }
            else if let n = try? c.decode(Int.self) { self = .number(n) }
            else if let p = try? c.decode([[JSONValue]].self), !p.isEmpty { self = .pairs(p) }
            else { self = .list(try c.decode([JSONValue].self)) }
        }

        func cbor(kind: String) throws -> CBORValue {
            switch (kind, self) {
            case ("int", .string(let s)):
                if s.hasPrefix("-") { return .negative(UInt64(decrement(String(s.dropFirst())))!) } // -n is stored as n - 1
                return .unsigned(UInt64(s)!)
            case ("bytes", .string(let s)): return .bytes(hexBytes(s))
            case ("text", .string(let s)): return .text(s)
            case ("array", .list(let items)): return .array(items.map(\.cbor))
            case ("map", .list): return .map([])
            case ("map", .pairs(let pairs)): return .map(pairs.map { CBORPair($0[0].cbor, $0[1].cbor) })
            case ("range", .number(let n)): return .array((1...n).map { .unsigned(UInt64($0)) })
            default: throw PythonOracle.Failure(description: "bad vector notation \(kind)")
            }
        }
    }

    static let vectors: Vectors = {
        let url = Bundle.module.url(forResource: "Vectors/rfc8949-appendix-a", withExtension: "json")!
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    @Test func rfc8949ExamplesEncodeAndDecode() throws {
        #expect(Self.vectors.deterministic.count >= 35)
        for vector in Self.vectors.deterministic {
            #expect(hexString(CBOREncoder.encode(vector.value.cbor)) == vector.hex, "encode \(vector.hex)")
            #expect(try CBORDecoder.decode(hexBytes(vector.hex)) == vector.value.cbor, "decode \(vector.hex)")
        }
    }

    @Test func encodingsItMustRefuse() throws {
        #expect(Self.vectors.refused.count >= 20)
        for vector in Self.vectors.refused {
            do {
                let value = try CBORDecoder.decode(hexBytes(vector.hex))
                Issue.record("\(vector.hex) was accepted as \(value)")
            } catch let error as CBORError {
                #expect(error.problem.contains(vector.why), "\(vector.hex): \(error)")
            }
        }
    }

    @Test func mapsAreSortedByTheirEncodedKeys() {
        let map = CBORValue.map([CBORPair(.text("aa"), .int(1)), CBORPair(.int(1000), .int(2)), CBORPair(.text("b"), .int(3))])
        // RFC 8949 §4.2.1: bytewise order of encoded keys, so the 3-byte integer key (0x19…) comes first.
        #expect(hexString(CBOREncoder.encode(map)) == "a31903e80261620362616101")
    }

    @Test func limitsAreCheckedBeforeParsing() {
        #expect(throws: CBORError.self) { try CBORDecoder.decode([UInt8](repeating: 0, count: 11), limits: .init(maxBytes: 10)) }
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        #expect { try CBORDecoder.decode(deep) } throws: { ($0 as? CBORError)?.problem.contains("nested deeper than 32") == true }
        // An array claiming 2^32 items in 9 bytes is refused without allocating for them.
        #expect { try CBORDecoder.decode(hexBytes("9affffffff00")) } throws: { ($0 as? CBORError)?.problem.contains("longer than the data") == true }
    }

    /// cbor2's canonical encodings of random values decode here and re-encode to the same bytes.
    @Test func cbor2EncodingsRoundTrip() throws {
        let lines = PythonOracle.lines(try PythonOracle.run("cbor_oracle.py", ["generate", "400", "7"]))
        #expect(lines.count == 400)
        for line in lines {
            let value = try CBORDecoder.decode(hexBytes(line))
            #expect(hexString(CBOREncoder.encode(value)) == line)
        }
    }

    /// Values encoded here are read by cbor2, whose canonical re-encoding is byte-identical.
    @Test func ourEncodingsRoundTripThroughCbor2() throws {
        var generator = SplitMix(state: 11)
        let encoded = (0..<400).map { _ in hexString(CBOREncoder.encode(randomValue(&generator, depth: 0))) }
        let back = PythonOracle.lines(try PythonOracle.run("cbor_oracle.py", ["reencode"], input: Data((encoded.joined(separator: "\n") + "\n").utf8)))
        #expect(back == encoded)
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    func randomValue(_ g: inout SplitMix, depth: Int) -> CBORValue {
        switch g.below(depth < 4 ? 9 : 6) {
        case 0: return .unsigned([0, 23, 24, 255, 256, 65_535, 65_536, UInt64(UInt32.max), 1 << 32, .max, g.next()][g.below(11)])
        case 1: return .negative([0, 23, 24, 255, 256, 65_535, 65_536, 1 << 32, .max, g.next()][g.below(10)])
        case 2: return .bytes((0..<[0, 1, 23, 24, 256][g.below(5)]).map { _ in UInt8(g.below(256)) })
        case 3: return .text(String((0..<g.below(30)).map { _ in Array("aé€😀 Z\u{0}")[g.below(7)] }))
        case 4: return .bool(g.below(2) == 0)
        case 5: return .null
        case 6, 7: return .array((0..<[0, 1, 3, 24][g.below(4)]).map { _ in randomValue(&g, depth: depth + 1) })
        default:
            var keys: Set<String> = []
            for _ in 0..<g.below(8) { keys.insert(String((0..<g.below(30)).map { _ in Array("abcdefghij")[g.below(10)] })) }
            return .map(keys.map { CBORPair(.text($0), randomValue(&g, depth: depth + 1)) })
        }
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = s.startIndex
    while i < s.endIndex {
        let j = s.index(i, offsetBy: 2)
        out.append(UInt8(s[i..<j], radix: 16)!)
        i = j
    }
    return out
}

/// A decimal string minus one (2^64 does not fit in UInt64, 2^64 - 1 does).
func decrement(_ decimal: String) -> String {
    var digits = Array(decimal.utf8)
    var i = digits.count - 1
    while digits[i] == UInt8(ascii: "0") { digits[i] = UInt8(ascii: "9"); i -= 1 }
    digits[i] -= 1
    let text = String(decoding: digits, as: UTF8.self)
    return text.count > 1 && text.hasPrefix("0") ? String(text.dropFirst()) : text
}

func hexString(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
