import Foundation
import Testing
import KeyhostCrypto
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
        #expect(broken?.description.contains("correct format") == false, "\(String(describing: broken))")
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

    static let segwit = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
    static let legacy = "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"
    static let testnet = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"
    static let ethereum = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"

    @Test("With the coin scanned, every entry must be one of its addresses; comments and blank lines stay allowed")
    func entriesAreAddressesOfTheCoin() throws {
        let good = try IndexFileUsageSource(contents: "# used\n\n\(Self.segwit)  # mine\n\(Self.legacy)\n", format: .text, coin: .bitcoin)
        #expect(good.addresses == [Self.segwit, Self.legacy])
        let eth = try IndexFileUsageSource(contents: "\(Self.ethereum)\n\(Self.ethereum.lowercased())\n", format: .text, coin: .ethereum)
        #expect(eth.addresses.count == 1)
    }

    @Test("A bad entry is refused with the file, the line and what is wrong", arguments: [
        ("hello world", Coin.bitcoin, #"used-addresses.txt:3: "hello world" is not a Bitcoin address (invalid address: character "#),
        ("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", .bitcoin, #"used-addresses.txt:3: "1BvBMSEYstWetqTFn5Au…" is not a Bitcoin address (invalid address: bad checksum"#),
        (testnet, .bitcoin, #"used-addresses.txt:3: "tb1q6rz28mcfaxtmd6v7…" is a Bitcoin testnet address, but the scan is for Bitcoin"#),
        (segwit, .litecoin, #"used-addresses.txt:3: "bc1qcr8te4kr609gcawu…" is a Bitcoin address, but the scan is for Litecoin"#),
        (segwit, .ethereum, #"used-addresses.txt:3: "bc1qcr8te4kr609gcawu…" is a Bitcoin address, but the scan is for Ethereum"#),
        ("0x9858EfFD232B4033E47d90003D41EC34EcaEda95", .ethereum, #"used-addresses.txt:3: "0x9858EfFD232B4033E4…" is not an Ethereum address (invalid address: bad checksum"#),
    ])
    func badEntries(entry: String, coin: Coin, message: String) throws {
        let contents = "# used\n\(coin == .ethereum ? Self.ethereum : coin == .litecoin ? "" : Self.segwit)\n\(entry)\n"
        let error = discoveryError { _ = try IndexFileUsageSource(contents: contents, format: .text, origin: "used-addresses.txt", coin: coin) }
        let text = try #require(error?.description)
        #expect(text.hasPrefix("index file " + message), "\(text)")
        #expect(text.hasSuffix("; fix or remove that line (# starts a comment)"), "\(text)")
    }

    @Test("CSV rows and JSON items are located too; a secret on a bad line is not echoed")
    func locationsAndSecrets() throws {
        let csv = discoveryError { _ = try IndexFileUsageSource(contents: "txid,address\nff,\(Self.segwit)\n\"a\nb\",oops\n", format: .csv, origin: "u.csv", coin: .bitcoin) }
        #expect(csv?.description.hasPrefix(#"index file u.csv:3: "oops" is not a Bitcoin address"#) == true, "\(String(describing: csv))")
        let headerless = discoveryError { _ = try IndexFileUsageSource(contents: "txid,addr\nff,\(Self.segwit)\n", format: .csv, origin: "u.csv", coin: .bitcoin) }
        #expect(headerless?.description.contains(#"u.csv:1: "txid" is not a Bitcoin address"#) == true)
        #expect(headerless?.description.contains(#"no header names an "address" column"#) == true)
        let json = discoveryError { _ = try IndexFileUsageSource(contents: "[\"\(Self.segwit)\", {\"address\": \"x\"}]", format: .json, origin: "u.json", coin: .bitcoin) }
        #expect(json?.description.hasPrefix(#"index file u.json item #2: "x" is not a Bitcoin address"#) == true)
        #expect(json?.description.hasSuffix("; fix or remove that item") == true)
        let xprv = "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu"
        let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
        for secret in [xprv, words] {
            let text = try #require(discoveryError { _ = try IndexFileUsageSource(contents: secret + "\n", format: .text, origin: "u.txt", coin: .bitcoin) }?.description)
            #expect(text.hasPrefix("index file u.txt:1: the entry (not shown: it looks like a secret)"), "\(text)")
            #expect(!text.contains("xprv9s") && !text.contains("abandon"))
        }
        let long = String(repeating: "z", count: 500)
        let shown = try #require(discoveryError { _ = try IndexFileUsageSource(contents: long, format: .text, coin: .bitcoin) }?.description)
        #expect(!shown.contains(String(repeating: "z", count: 21)))
    }
}
