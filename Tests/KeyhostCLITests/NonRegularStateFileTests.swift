import Foundation
import Testing

/// A path where keyhost keeps state (`--checkpoint`, `--card-state`) that names a FIFO or a device is refused at
/// once, naming the file and what it is: opening a FIFO to read blocked until a writer came (for ever), and the
/// rename that writes the file would have replaced the FIFO or device.
@Suite struct NonRegularStateFileTests {
    /// Runs keyhost with `arguments`; nil when it was still running after `bound` seconds (then it is killed).
    static func run(_ arguments: [String], environment: [String: String] = [:], bound: Double = 20) throws -> KeyhostRun? {
        let process = Process()
        process.executableURL = Keyhost.binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["XDG_STATE_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-tests-state").path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let ended = group.wait(timeout: .now() + bound) == .success
        if !ended { kill(process.processIdentifier, SIGKILL); group.wait() }
        process.waitUntilExit()
        guard ended else { return nil }
        return KeyhostRun(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self), signaled: process.terminationReason == .uncaughtSignal)
    }

    @Test func aCheckpointThatIsAFIFOIsRefusedNamingIt() throws {
        let dir = try Keyhost.scratch(["none.lua": "return function(a) local o = {} for i = 1, #a do o[i] = false end return o end"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("cp.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let run = try #require(try Self.run(["discover", "--mnemonic-env", "W", "--source", "lua:\(dir.path)/none.lua", "--checkpoint", fifo],
                                            environment: ["W": DiscoverCommandTests.words]), "keyhost discover blocked on the FIFO")
        #expect(run.status == 1 && !run.signaled)
        #expect(run.stderr.contains(fifo) && run.stderr.contains("is a FIFO (named pipe), not a regular file"), "\(run.stderr)")
        var info = stat()
        #expect(stat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced")
    }

    @Test func aCardStateThatIsAFIFOIsRefusedNamingIt() throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("card.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let run = try #require(try Self.run(["card", "status", "--reader", "virtual", "--card-state", fifo]),
                               "keyhost card status blocked on the FIFO")
        #expect(run.status == 1 && !run.signaled)
        #expect(run.stderr.contains(fifo) && run.stderr.contains("is a FIFO (named pipe)"), "\(run.stderr)")
    }
}
