import Foundation
import KeyhostPlayer
import KeyhostWorkerProcess
import KeyhostTestSupport
import KeyhostTokens
import Testing

/// Children get descriptors 0-2 only: a file keyhost holds open without close-on-exec (one a Lua script
/// opened, one the shell handed down) must not reach the token worker or the ledger service.
@Suite struct ChildDescriptorTests {
    /// The token worker, started by the real WorkerRunner; a stand-in that blocks in place of keyhost's
    /// worker (its exec keeps exactly what it inherited) is inspected while it runs, then killed.
    @Test func theWorkerInheritsOnlyZeroToTwo() throws {
        let (leaked, marker) = try ChildDescriptors.openLeakable()
        defer { close(leaked); unlink(marker) }
        let tag = "\(UInt32.random(in: 1...UInt32.max))"  // sleep's fraction: this test's child, no other
        let dir = try Keyhost.scratch(["worker.sh": "#!/bin/sh\nexec /bin/sleep 1000.\(tag)\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("worker.sh").path
        chmod(script, 0o755)

        let finished = DispatchSemaphore(value: 0)
        let done = Done()
        DispatchQueue.global().async {
            let runner = WorkerRunner(executable: script)
            // The limit is far away: the test ends the worker itself once it has looked.
            _ = runner.run(try! WorkerRunnerTests.request("return", limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 600_000)))
            done.set()
            finished.signal()
        }
        let worker = try #require(ChildDescriptors.waitForChild(of: getpid(), arguments: ["/bin/sleep", "1000.\(tag)"], while: { !done.value }))
        let held = ChildDescriptors.descriptors(of: worker)
        kill(worker, SIGKILL)
        finished.wait()
        #expect(Set(held.keys) == [0, 1, 2], "the worker holds \(held)")
        #expect(!held.values.contains(marker))
    }

    /// `keyhost token ledger serve` execs keyhost-ledger in its place: the server keeps none of the shell's descriptors.
    @Test func theLedgerServiceKeepsNoneOfTheShellsDescriptors() throws {
        let dir = try Keyhost.scratch(["marker": "marker"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let marker = dir.appendingPathComponent("marker").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The shell opens fd 9 (no close-on-exec) and becomes keyhost, as `exec 9<file; keyhost …` in a script would.
        process.arguments = ["-c", "exec 9<\"$1\"; exec \"$0\" token ledger serve --db \"sqlite:$2\" --issuer \"$3\" --listen 127.0.0.1:0",
                             Keyhost.binary.path, marker, dir.appendingPathComponent("ledger.db").path, "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Listening: the exec is done and the server has opened what it opens.
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("listening on") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk
        }
        let held = ChildDescriptors.descriptors(of: process.processIdentifier)
        process.terminate()
        process.waitUntilExit()
        #expect(String(decoding: seen, as: UTF8.self).contains("listening on"), "\(String(decoding: seen, as: UTF8.self))")
        #expect(!held.isEmpty && !held.values.contains(marker), "the service holds \(held)")
    }
}

/// A flag one thread sets and another reads.
final class Done: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool { lock.withLock { flag } }
    func set() { lock.withLock { flag = true } }
}
