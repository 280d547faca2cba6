import Testing
@testable import KeyhostEthereum

/// Cases from ethereum/tests RLPTests (rlptest.json, invalidRLPTest.json), re-typed here, plus pyrlp on random trees.
@Suite("RLP")
struct RLPTests {
    static let lorem55 = Array("Lorem ipsum dolor sit amet, consectetur adipisicing eli".utf8)
    static let lorem56 = Array("Lorem ipsum dolor sit amet, consectetur adipisicing elit".utf8)
    static let lorem1024 = Array(("Lorem ipsum dolor sit amet, consectetur adipiscing elit. Curabitur mauris magna, suscipit sed vehicula non, iaculis faucibus tortor. "
                                  + String(repeating: "x", count: 1024)).utf8.prefix(1024))

    static func s(_ text: String) -> RLPItem { .bytes(Array(text.utf8)) }
    /// A decimal integer (the vectors' "#…" inputs); text that does not parse gives a list, which fails the comparison.
    static func n(_ text: String) -> RLPItem { (try? UInt256(parsing: text)).map { RLPItem.integer($0) } ?? .list([]) }

    static let valid: [(String, RLPItem, String)] = [
        ("emptystring", .bytes([]), "80"),
        ("bytestring00", .bytes([0]), "00"),
        ("bytestring01", .bytes([1]), "01"),
        ("bytestring7F", .bytes([0x7f]), "7f"),
        ("shortstring", s("dog"), "83646f67"),
        ("shortstring2 (55 bytes)", .bytes(lorem55), "b7" + hex0x(lorem55).dropFirst(2)),
        ("longstring (56 bytes)", .bytes(lorem56), "b838" + hex0x(lorem56).dropFirst(2)),
        ("longstring2 (1024 bytes)", .bytes(lorem1024), "b90400" + hex0x(lorem1024).dropFirst(2)),
        ("zero", .integer(0), "80"),
        ("smallint", .integer(1), "01"),
        ("smallint2", .integer(16), "10"),
        ("smallint3", .integer(79), "4f"),
        ("smallint4", .integer(127), "7f"),
        ("mediumint1", .integer(128), "8180"),
        ("mediumint2", .integer(1000), "8203e8"),
        ("mediumint3", .integer(100000), "830186a0"),
        ("mediumint4", n("83729609699884896815286331701780722"), "8f102030405060708090a0b0c0d0e0f2"),
        ("mediumint5", n("105315505618206987246253880190783558935785933862974822347068935681"),
         "9c0100020003000400050006000700080009000a000b000c000d000e01"),
        ("emptylist", .list([]), "c0"),
        ("stringlist", .list([s("dog"), s("god"), s("cat")]), "cc83646f6783676f6483636174"),
        ("multilist", .list([s("zw"), .list([.integer(4)]), .integer(1)]), "c6827a77c10401"),
        ("shortListMax1", .list(["asdf", "qwer", "zxcv", "asdf", "qwer", "zxcv", "asdf", "qwer", "zxcv", "asdf", "qwer"].map(s)),
         "f784617364668471776572847a78637684617364668471776572847a78637684617364668471776572847a78637684617364668471776572"),
        ("longList1", .list([RLPItem](repeating: .list([s("asdf"), s("qwer"), s("zxcv")]), count: 4)),
         "f840" + String(repeating: "cf84617364668471776572847a786376", count: 4)),
        ("longList2", .list([RLPItem](repeating: .list([s("asdf"), s("qwer"), s("zxcv")]), count: 32)),
         "f90200" + String(repeating: "cf84617364668471776572847a786376", count: 32)),
        ("listsoflists", .list([.list([.list([]), .list([])]), .list([])]), "c4c2c0c0c0"),
        ("listsoflists2", .list([.list([]), .list([.list([])]), .list([.list([]), .list([.list([])])])]), "c7c0c1c0c3c0c1c0"),
        ("dictTest1", .list([.list([s("key1"), s("val1")]), .list([s("key2"), s("val2")]), .list([s("key3"), s("val3")]), .list([s("key4"), s("val4")])]),
         "ecca846b6579318476616c31ca846b6579328476616c32ca846b6579338476616c33ca846b6579348476616c34"),
        ("bigint (2^256 as bytes)", .bytes([1] + [UInt8](repeating: 0, count: 32)), "a1010000000000000000000000000000000000000000000000000000000000000000"),
    ]

    @Test("ethereum/tests valid vectors encode and decode", arguments: 0..<valid.count)
    func validVector(_ index: Int) throws {
        let (name, item, encoded) = Self.valid[index]
        #expect(hex0x(RLP.encode(item)) == "0x" + encoded, "\(name)")
        #expect(try RLP.decode(bytes(encoded)) == item, "\(name)")
    }

    static let invalid: [(String, String, String)] = [
        ("emptyEncoding", "", "no bytes"),
        ("bytesShouldBeSingleByte00", "8100", "non-canonical"),
        ("bytesShouldBeSingleByte01", "8101", "non-canonical"),
        ("bytesShouldBeSingleByte7F", "817f", "non-canonical"),
        ("nonOptimalLongLengthArray1", "b81000112233445566778899aabbccddeeff", "non-canonical"),
        ("nonOptimalLongLengthList", "f80180", "non-canonical"),
        ("leadingZerosInLongLengthArray1", "b90040" + String(repeating: "00", count: 64), "leading zero"),
        ("leadingZerosInLongLengthList", "f9000100", "leading zero"),
        ("lessThanShortLengthArray1", "81", "truncated"),
        ("lessThanShortLengthArray2", "a0000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e", "truncated"),
        ("lessThanShortLengthList", "c5010203", "truncated"),
        ("lessThanLongLengthArray1", "ba010000aabbccddeeff", "truncated"),
        ("lessThanLongLengthList", "f90100c0", "truncated"),
        ("int32Overflow", "bf0f000000000000021111", "truncated"),
        ("int64Overflow", "bfffffffffffffffff0000", "corrupt"),
        ("lengthOfLengthTruncated", "b9ff", "truncated"),
        ("int32Overflow2", "ff0f000000000000021111", "truncated"),
        ("wrongSizeList2", "f80100", "non-canonical"),
        ("incorrectLengthInArray", "b9002100dc2b275d0f74e8a53e6f4ec61b27f24278820be3f82ea2110e582081b0565df0", "leading zero"),
        ("leadingZerosInLongLengthArray2", "b800", "leading zero"),
        ("leadingZerosInLongLengthList1", "fb00000040000102030405060708090a0b0c0d0e0f", "leading zero"),
        ("leadingZerosInLongLengthList2", "f800", "leading zero"),
        ("nonOptimalLongLengthArray2", "b801ff", "non-canonical"),
        ("nonOptimalLongLengthList1", "f810000102030405060708090a0b0c0d0e0f", "non-canonical"),
        ("nonOptimalLongLengthList2", "f803112233", "non-canonical"),
        ("trailing bytes", "8300000000", "follow the complete item"),
        ("two items", "0101", "follow the complete item"),
        ("listInsideTruncated", "c3c58000", "truncated"),
        ("wrongSizeList inner non-canonical", "c28100", "non-canonical"),
    ]

    @Test("ethereum/tests invalid encodings are refused with the offset", arguments: 0..<invalid.count)
    func invalidVector(_ index: Int) {
        let (name, encoded, expected) = Self.invalid[index]
        do {
            let item = try RLP.decode(bytes(encoded))
            Issue.record("\(name) decoded to \(item)")
        } catch {
            #expect("\(error)".contains(expected), "\(name): \(error)")
        }
    }

    @Test("nesting deeper than the limit is refused, not a stack overflow")
    func depthLimit() {
        let deep = [UInt8](repeating: 0xc1, count: 10_000) + [0xc0]
        #expect(throws: RLPError.self) { try RLP.decode(deep) }
        // 70 levels with correct lengths: the limit, not the truncation, must stop it.
        var nested = RLPItem.list([])
        for _ in 0..<70 { nested = .list([nested]) }
        do {
            _ = try RLP.decode(RLP.encode(nested))
            Issue.record("a 71-deep list decoded")
        } catch let error as RLPError {
            #expect(error.problem == .tooDeep(limit: RLP.defaultMaxDepth))
        } catch { Issue.record("\(error)") }
        #expect(throws: RLPError.self) { try RLP.decode([UInt8](repeating: 0, count: 10), maxInput: 5) }
    }

    @Test("random trees round-trip and match pyrlp")
    func randomAgainstPyRLP() throws {
        var rng = SplitMix(seed: 7)
        var trees = [RLPItem]()
        for _ in 0..<200 { trees.append(Self.randomItem(&rng, depth: 0)) }
        let encoded = trees.map { hex0x(RLP.encode($0)) }
        let reference = try EthOracle.run(["rlp-encode"], input: trees.map(Self.pythonShape)) as? [String]
        #expect(reference == encoded)
        for (tree, bytesHex) in zip(trees, encoded) { #expect(try RLP.decode(bytes(bytesHex)) == tree) }
    }

    static func randomItem(_ rng: inout SplitMix, depth: Int) -> RLPItem {
        if depth < 4, rng.next() % 3 == 0 {
            return .list((0..<Int(rng.next() % 6)).map { _ in randomItem(&rng, depth: depth + 1) })
        }
        let length = [0, 1, 1, 2, 55, 56, 57, 300][Int(rng.next() % 8)]
        return .bytes((0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next() % (rng.next() % 2 == 0 ? 0x80 : 256)) })
    }

    /// Byte strings as "0x…" text, lists as arrays: what the oracle turns back into bytes and lists for pyrlp.
    static func pythonShape(_ item: RLPItem) -> Any {
        switch item {
        case .bytes(let b): return hex0x(b)
        case .list(let items): return items.map(pythonShape)
        }
    }
}

/// A small reproducible generator (SplitMix64) so failures can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
