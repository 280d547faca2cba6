import Foundation
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
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The repository root, found from this file's location (Tests/KeyhostCryptoTests/TestSupport.swift).
    static var repoRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs Tests/Oracles/<script> with the venv's Python; a missing venv is a failure, never a skip.
    static func run(_ script: String, _ arguments: [String] = []) throws -> Data {
        let python = repoRoot.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(description: "Python oracle venv missing at \(python.path); run scripts/bootstrap to create it (needs bip-utils, coincurve, eth-account, mnemonic, btclib)")
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [repoRoot.appendingPathComponent("Tests/Oracles/\(script)").path] + arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read before waiting: a full pipe would otherwise block the child forever.
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "oracle \(script) exited with \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))\(String(decoding: output, as: UTF8.self))")
        }
        return output
    }
}
