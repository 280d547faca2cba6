import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The tap protocol's CBOR, checked against cbor2 (the maker's client encodes with it) and against hostile bytes.
@Suite struct CKTapCBORTests {
    /// RFC 8949 Appendix A examples within the subset, and a status request as cktap sends it.
    @Test func knownEncodings() throws {
        let cases: [(CKTapCBOR, String)] = [
            (.int(0), "00"), (.int(23), "17"), (.int(24), "1818"), (.int(1000), "1903e8"), (.int(1_000_000), "1a000f4240"),
            (.unsigned(18_446_744_073_709_551_615), "1bffffffffffffffff"), (.int(-1), "20"), (.int(-1000), "3903e7"),
            (.bytes([1, 2, 3, 4]), "4401020304"), (.text("IETF"), "6449455446"), (.text("ü"), "62c3bc"),
            (.array([.int(1), .array([.int(2), .int(3)])]), "8201820203"), (.bool(false), "f4"), (.bool(true), "f5"), (.null, "f6"),
            (.textMap([("cmd", .text("status"))]), "a163636d6466737461747573"),
        ]
        for (value, hex) in cases {
            #expect(hexOf(CKTapCBORCoding.encode(value)) == hex)
            #expect(try CKTapCBORCoding.decode(try Hex.decode(hex)) == value)
        }
    }

    /// cbor2's canonical encodings of random values (the existing token oracle) decode and re-encode byte for byte.
    @Test func cbor2EncodingsRoundTrip() throws {
        let lines = try tapOracle(["generate", "300", "23"], script: "cbor_oracle.py").split(separator: "\n").map(String.init)
        #expect(lines.count == 300)
        var decoded = 0
        for line in lines {
            let bytes = try Hex.decode(line)
            // The generator makes arrays of 24 and maps of 8 at most, but floats/tags never: all within the subset.
            guard let value = try? CKTapCBORCoding.decode(bytes) else { continue }
            decoded += 1
            #expect(hexOf(CKTapCBORCoding.encode(value)) == line)
        }
        #expect(decoded == 300)
    }

    /// cbor2 reads what keyhost encodes; its canonical re-encoding decodes here to the same value (map order aside).
    @Test func ourEncodingsReadByCbor2() throws {
        let values: [CKTapCBOR] = [
            .textMap([("nonce", .bytes(Array(0..<16))), ("cmd", .text("read"))]),
            .textMap([("path", .array([.unsigned(0x8000_0054), .unsigned(0x8000_0000)])), ("master", .bool(true)), ("cmd", .text("derive"))]),
            .array([.int(-70000), .unsigned(1 << 40), .text("héllo"), .null]),
        ]
        let encoded = values.map { hexOf(CKTapCBORCoding.encode($0)) }
        let back = try tapOracle(["reencode"], input: encoded.joined(separator: "\n") + "\n", script: "cbor_oracle.py").split(separator: "\n").map(String.init)
        #expect(back.count == values.count)
        for (line, value) in zip(back, values) {
            let reread = try CKTapCBORCoding.decode(try Hex.decode(line))
            #expect(sortedMaps(reread) == sortedMaps(value))
        }
    }

    private func sortedMaps(_ v: CKTapCBOR) -> CKTapCBOR {
        switch v {
        case .map(let pairs):
            return .map(pairs.map { CKTapCBORPair(key: $0.key, value: sortedMaps($0.value)) }.sorted { hexOf(CKTapCBORCoding.encode($0.key)) < hexOf(CKTapCBORCoding.encode($1.key)) })
        case .array(let items): return .array(items.map(sortedMaps))
        default: return v
        }
    }

    /// Malformed input is a typed error naming the problem, never a trap or a huge allocation.
    @Test func hostileInputs() throws {
        func error(_ hex: String) -> CKTapCBORError? {
            do { _ = try CKTapCBORCoding.decode(try Hex.decode(hex)); return nil } catch { return error as? CKTapCBORError }
        }
        #expect(error("") == .truncated(offset: 0))
        #expect(error("5a ffffffff".replacingOccurrences(of: " ", with: "")) == .truncated(offset: 5))
        #expect(error("9b ffffffffffffffff".replacingOccurrences(of: " ", with: "")) == .tooLarge(what: "array", limit: CKTapCBORCoding.maxItems))
        #expect(error(String(repeating: "81", count: 20) + "00") == .tooDeep(limit: CKTapCBORCoding.maxDepth))
        #expect(error("0000") == .trailingBytes(offset: 1))
        #expect(error("c000") == .unsupported(offset: 0, initialByte: 0xC0))
        #expect(error("f93c00") == .unsupported(offset: 0, initialByte: 0xF9))
        #expect(error("5f") == .unsupported(offset: 0, initialByte: 0x5F))
        #expect(error("62c328") == .invalidText(offset: 0))
        #expect(error("1c") == .unsupported(offset: 0, initialByte: 0x1C))
        #expect(throws: CKTapCBORError.inputTooLong(70_000, limit: CKTapCBORCoding.maxInput)) { try CKTapCBORCoding.decode([UInt8](repeating: 0, count: 70_000)) }
    }

    /// Random and mutated bytes: every outcome is a value or a `CKTapCBORError`.
    @Test func fuzzDecoder() throws {
        let random = SeededRandom(seed: "cbor fuzz")
        let seedValue = CKTapCBORCoding.encode(.textMap([("a", .array([.int(1), .bytes([1, 2]), .text("x")])), ("b", .null)]))
        for round in 0..<5000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = random.bytes(Int(random.bytes(1)[0]) % 64)
            } else {
                bytes = seedValue
                let flips = 1 + Int(random.bytes(1)[0]) % 4
                for _ in 0..<flips { bytes[Int(random.bytes(1)[0]) % bytes.count] = random.bytes(1)[0] }
                bytes = Array(bytes.prefix(Int(random.bytes(1)[0]) % (bytes.count + 1)))
            }
            do { _ = try CKTapCBORCoding.decode(bytes) } catch is CKTapCBORError {}
        }
    }
}
