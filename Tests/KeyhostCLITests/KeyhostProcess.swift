import Foundation
import Testing

/// Runs the built `keyhost` binary and captures what it printed.
struct KeyhostRun {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Ended by a signal (a trap, a crash); `status` is then the signal's number.
    var signaled = false
}

enum Keyhost {
    /// The repository root, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The keyhost binary next to the test bundle (same build folder and configuration).
    static let binary: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("keyhost")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return repository.appendingPathComponent(".build/debug/keyhost")
    }()

    @discardableResult
    static func run(
        _ arguments: [String], stdin: String? = nil, cwd: URL? = nil, environment: [String: String] = [:],
        executable: URL? = nil
    ) throws -> KeyhostRun {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        process.currentDirectoryURL = cwd ?? repository
        var env = ProcessInfo.processInfo.environment
        env["XDG_STATE_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-tests-state").path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        return KeyhostRun(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self),
            signaled: process.terminationReason == .uncaughtSignal
        )
    }

    /// A temporary folder with the given files, removed by the caller.
    static func scratch(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in files {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return dir
    }
}
