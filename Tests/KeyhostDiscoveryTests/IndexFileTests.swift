import Foundation
import Testing
@testable import KeyhostDiscovery

@Suite("Index file usage source")
struct IndexFileTests {
    @Test("Text: one address per line, # comments, blank lines")
    func text() throws {
        let source = try IndexFileUsageSource(contents: "# exported\nbc1qa  # first\n\n  1Abc\n#bc1qgone\n", format: .text)
        #expect(source.addresses == ["bc1qa", "1Abc"])
        #expect(try source.usage(of: ["bc1qa", "1abc", "1Abc", "bc1qgone"]) == [true, false, true, false])
    }

    @Test("CSV: the address column, quoted fields; or the first column without a header")
    func csv() throws {
        let named = try IndexFileUsageSource(contents: "txid,Address,amount\nff,bc1qa,1\n\"a,b\",\"bc1qb\",\"2,5\"\r\nee,,3\n", format: .csv)
        #expect(named.addresses == ["bc1qa", "bc1qb"])
        let plain = try IndexFileUsageSource(contents: "bc1qa,10\nbc1qc,0\n", format: .csv)
        #expect(plain.addresses == ["bc1qa", "bc1qc"])
    }

    @Test("JSON: strings or objects with address; anything else is an error")
    func json() throws {
        #expect(try IndexFileUsageSource(contents: "[\"bc1qa\", \"bc1qb\"]").addresses == ["bc1qa", "bc1qb"])
        #expect(try IndexFileUsageSource(contents: "[{\"address\": \"bc1qa\", \"txs\": 3}]", format: .json).addresses == ["bc1qa"])
        let broken = discoveryError { _ = try IndexFileUsageSource(contents: "[\"bc1qa\",", format: .json, origin: "used.json") }
        #expect(broken?.description.contains("used.json") == true && broken?.description.contains("not valid JSON") == true)
        let shape = discoveryError { _ = try IndexFileUsageSource(contents: "[{\"addr\": \"x\"}]", format: .json) }
        #expect(shape?.description.contains("item 0") == true)
        #expect(discoveryError { _ = try IndexFileUsageSource(contents: "{\"address\": \"x\"}", format: .json) } != nil)
    }

    @Test("Files: format from the extension; a missing file names its path")
    func files() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let csv = dir.appendingPathComponent("used.csv").path
        try "address\nbc1qa\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let json = dir.appendingPathComponent("used.json").path
        try "[\"bc1qb\"]".write(toFile: json, atomically: true, encoding: .utf8)
        let txt = dir.appendingPathComponent("used.list").path
        try "bc1qc\n".write(toFile: txt, atomically: true, encoding: .utf8)
        #expect(try IndexFileUsageSource(path: csv).addresses == ["bc1qa"])
        #expect(try IndexFileUsageSource(path: json).addresses == ["bc1qb"])
        #expect(try IndexFileUsageSource(path: txt).addresses == ["bc1qc"])
        let missing = discoveryError { _ = try IndexFileUsageSource(path: dir.appendingPathComponent("nope.txt").path) }
        #expect(missing?.description.contains("nope.txt") == true)
    }

    @Test("Case-insensitive encodings match in any case; Base58 does not")
    func normalisation() throws {
        let source = IndexFileUsageSource(addresses: ["0x9858effd232b4033e47d90003d41ec34ecaeda94", "BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU"])
        #expect(try source.usage(of: ["0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
                                      "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv"]) == [true, true, false])
    }
}
