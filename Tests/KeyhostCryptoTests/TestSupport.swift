import Foundation
import KeyhostTestSupport
import Testing
@testable import KeyhostCrypto

/// Loads the official vector files shipped in Vectors/.
enum Vectors {
    static func data(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Vectors"),
                               "vector file Vectors/\(name) is missing from the test bundle")
        return try Data(contentsOf: url)
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self)
    }

    static func json<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: data(name))
    }
}

/// Hex to bytes for test data; test data that is not hex is a broken test, reported as an empty array.
func hex(_ text: String) -> [UInt8] {
    do { return try Hex.decode(text) } catch {
        Issue.record("test data is not hex: \(text)")
        return []
    }
}

/// Runs the Python oracles in the repository's .venv (created by scripts/bootstrap).
enum Oracle {
    static var repoRoot: URL { PythonOracle.repositoryRoot }

    /// Runs Tests/Oracles/<script>; a missing venv is a failure, never a skip.
    static func run(_ script: String, _ arguments: [String] = []) throws -> Data {
        try PythonOracle.run(script, arguments)
    }
}
