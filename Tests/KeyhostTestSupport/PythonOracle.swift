import Foundation

/// Runs an independent Python implementation from Tests/Oracles with the repository's venv.
public enum PythonOracle {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The repository root, found from this file's location.
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs Tests/Oracles/<script> with `arguments`, feeding `input`; a missing venv is a failure, never a skip.
    public static func run(_ script: String, _ arguments: [String] = [], input: Data? = nil) throws -> Data {
        let python = repositoryRoot.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(description: "Python oracle venv missing at \(python.path); run scripts/bootstrap to create it")
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [repositoryRoot.appendingPathComponent("Tests/Oracles/\(script)").path] + arguments
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        // Feed and read concurrently: a full pipe in either direction would block both sides.
        final class Box: @unchecked Sendable { var data = Data() }
        let errors = Box()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            if let input { stdin.fileHandleForWriting.write(input) }
            try? stdin.fileHandleForWriting.close()
        }
        DispatchQueue.global().async(group: group) { errors.data = stderr.fileHandleForReading.readDataToEndOfFile() }
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "oracle \(script) exited with \(process.terminationStatus): \(String(decoding: errors.data, as: UTF8.self))")
        }
        return output
    }

    /// The non-empty lines of an oracle's output.
    public static func lines(_ data: Data) -> [String] {
        String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }
}
