import Foundation
import KeyhostCrypto
import KeyhostTestSupport
import Testing
@testable import KeyhostBitcoin

/// Descriptors checked against embit and BDK (Tests/Oracles/descriptor_oracle.py), both ways: random descriptors
/// keyhost writes are read by both libraries, random descriptors the oracle writes are read by keyhost, and the
/// checksums and the addresses at indexes 0, 1, 2 (of every multipath branch) must agree.
@Suite("Descriptors against embit and BDK")
struct DescriptorOracleTests {
    static func oracle(_ command: String, _ request: Any) throws -> [String: Any] {
        let output = try PythonOracle.run("descriptor_oracle.py", [command], input: try JSONSerialization.data(withJSONObject: request))
        return try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
    }

    /// keyhost's addresses at 0..<3 of every branch (index 0 only for a descriptor without /*).
    static func addresses(_ descriptor: OutputDescriptor, _ network: BitcoinNetwork) throws -> [[String]] {
        try descriptor.multipath().map { try $0.addresses(from: 0, count: $0.isRange ? 3 : 1, network: network) }
    }

    @Test("random descriptors keyhost writes: embit's checksum of the same text and BDK's parse of it (checksum verified) agree, and so do the addresses")
    func keyhostWrites() throws {
        var rng = SplitMix(seed: 0xDE5C)
        var cases = [[String: Any]]()
        var mine = [(OutputDescriptor, BitcoinNetwork, String)]()
        for _ in 0..<60 {
            let network = [BitcoinNetwork.mainnet, .mainnet, .testnet, .regtest, .signet].randomElement(using: &rng)!
            let text = try RandomDescriptor.make(&rng, testnet: network.isTestnet)
            let descriptor = try OutputDescriptor.parse(text)
            mine.append((descriptor, network, text))
            cases.append(["descriptor": descriptor.description, "network": network.rawValue, "from": 0, "count": 3])
        }
        let results = try #require(try Self.oracle("derive", ["cases": cases])["results"] as? [[String: Any]])
        #expect(results.count == mine.count)
        for ((descriptor, network, text), result) in zip(mine, results) {
            let embit = try #require(result["embit"] as? [String: Any]), bdk = try #require(result["bdk"] as? [String: Any])
            #expect(embit["checksum"] as? String == descriptor.checksum, "\(text)")
            // The text is already in normal form (lower-case hex, one hardened marker), so keyhost prints it back as written.
            #expect(descriptor.body == text)
            let ours = try Self.addresses(descriptor, network)
            let trim = { (all: [[String]]) in descriptor.isRange ? all : all.map { Array($0.prefix(1)) } }
            #expect(trim(try #require(embit["addresses"] as? [[String]])) == ours, "embit: \(text)")
            #expect(trim(try #require(bdk["addresses"] as? [[String]])) == ours, "BDK: \(text)")
            #expect(trim(try #require(bdk["wallet"] as? [[String]])) == ours, "BDK wallet: \(text)")
            // BDK prints hardened steps with '; keyhost prints them the way the text it read did.
            let bdkText = try #require(bdk["descriptor"] as? String)
            #expect(try OutputDescriptor.parse(bdkText).description == bdkText, "\(text)")
        }
    }

    @Test("random descriptors the oracle writes (embit's and BDK's text): keyhost verifies their checksums, prints BDK's form back, and derives the same addresses")
    func oracleWrites() throws {
        let answer = try Self.oracle("random", ["seed": 20260821, "count": 60])
        let cases = try #require(answer["cases"] as? [[String: Any]])
        #expect(cases.count == 60)
        for item in cases {
            let name = try #require(item["network"] as? String)
            let network = try #require(BitcoinNetwork(name: name))
            let expected = try #require(item["addresses"] as? [[String]])
            for key in ["embit_text", "bdk_text"] {
                let text = try #require(item[key] as? String)
                let descriptor = try OutputDescriptor.parse(text)
                let ours = try Self.addresses(descriptor, network)
                #expect(ours == (descriptor.isRange ? expected : expected.map { Array($0.prefix(1)) }), "\(key): \(text)")
            }
            let bdkText = try #require(item["bdk_text"] as? String)
            let parsed = try OutputDescriptor.parse(bdkText)
            #expect(parsed.description == bdkText)
            #expect(parsed.multipath().map(\.description) == (item["bdk_branches"] as? [String]), "\(bdkText)")
        }
    }
}

/// Random descriptors of every form keyhost derives, with origins, both hardened markers, hex and extended keys,
/// wildcards and <0;1> steps.
enum RandomDescriptor {
    static func make(_ rng: inout SplitMix, testnet: Bool) throws -> String {
        let marker = Bool.random(using: &rng) ? "h" : "'"
        let multipath = Int.random(in: 0..<10, using: &rng) < 3
        func extendedKey() throws -> String {
            let master = try HDNode(seed: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let path = (0..<Int.random(in: 1...3, using: &rng)).map { _ in UInt32.random(in: 0..<100, using: &rng) | DerivationPath.hardenedOffset }
            let account = try master.derive(DerivationPath(indexes: path)).neutered()
            let origin = "[" + KeyOrigin.hex(master.fingerprint) + path.map { "/\($0 - DerivationPath.hardenedOffset)\(marker)" }.joined() + "]"
            let steps = (0..<Int.random(in: 0...1, using: &rng)).map { _ in "/\(UInt32.random(in: 0..<DerivationPath.hardenedOffset, using: &rng))" }.joined()
            return origin + account.extendedPublicKey(testnet ? .tpub : .xpub) + steps + (multipath ? "/<0;1>/*" : "/*")
        }
        func hexKey(xOnly: Bool = false) throws -> String {
            let key = try HDNode(seed: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }).publicKey
            return Hex.encode(xOnly ? key.xOnly.bytes : key.compressed)
        }
        func key(xOnly: Bool = false) throws -> String {
            Int.random(in: 0..<100, using: &rng) < 15 ? try hexKey(xOnly: xOnly && Bool.random(using: &rng)) : try extendedKey()
        }
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: return "pkh(\(try key()))"
        case 1: return "wpkh(\(try key()))"
        case 2: return "sh(wpkh(\(try key())))"
        case 3: return "tr(\(try key(xOnly: true)))"
        default:
            let n = Int.random(in: 1...4, using: &rng)
            var keys = try (0..<n).map { _ in try key() }
            if !keys.contains(where: { $0.hasSuffix("*") }) { keys[0] = try extendedKey() }
            let inner = "\(Bool.random(using: &rng) ? "sortedmulti" : "multi")(\(Int.random(in: 1...n, using: &rng)),\(keys.joined(separator: ",")))"
            return ["sh(\(inner))", "wsh(\(inner))", "sh(wsh(\(inner)))"].randomElement(using: &rng)!
        }
    }
}
