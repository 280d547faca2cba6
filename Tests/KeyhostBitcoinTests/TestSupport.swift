import Foundation
import KeyhostCrypto
import KeyhostTestSupport
import Testing
@testable import KeyhostBitcoin

func hex(_ text: String) -> [UInt8] {
    do { return try Hex.decode(text) } catch {
        Issue.record("test data is not hex: \(text)")
        return []
    }
}

func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// One case of the BIP174/370/371 vector files (Vectors/bip*.json, extracted from the BIPs' text).
struct VectorCase: Decodable, CustomTestStringConvertible {
    let kind: String
    let name: String
    let hex: String
    let locktime: Int?
    var testDescription: String { name }
}

struct VectorFile: Decodable {
    let cases: [VectorCase]
}

struct BIP174Roles: Decodable {
    let master_tprv: String
    let creator: String
    let previous_transactions: [String]
    let updater: String
    let sighash_all: String
    let signer1: String
    let signer1_keys: [String]
    let signer2: String
    let signer2_keys: [String]
    let combined: String
    let finalized: String
    let extracted: String
    let unknown_a: String
    let unknown_b: String
    let unknown_combined: String
}

enum Vectors {
    static func data(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Vectors"),
                               "vector file Vectors/\(name) is missing from the test bundle")
        return try Data(contentsOf: url)
    }

    static func cases(_ name: String) -> [VectorCase] {
        (try? JSONDecoder().decode(VectorFile.self, from: data(name)).cases) ?? []
    }

    static func roles() throws -> BIP174Roles {
        struct File: Decodable { let roles: BIP174Roles }
        return try JSONDecoder().decode(File.self, from: data("bip174.json")).roles
    }
}

/// Runs Tests/Oracles/psbt_oracle.py (embit) and decodes its JSON answer.
enum PSBTOracle {
    static func run(_ command: String, _ request: Any) throws -> [String: Any] {
        let input = try JSONSerialization.data(withJSONObject: request)
        let output = try PythonOracle.run("psbt_oracle.py", [command], input: input)
        return try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
    }
}

/// A deterministic generator so random cases reproduce.
struct SplitMix: RandomNumberGenerator {
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
