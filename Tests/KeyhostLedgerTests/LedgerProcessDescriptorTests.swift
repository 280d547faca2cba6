import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTestSupport
import Testing

/// The `keyhost-ledger pipe` child gets descriptors 0-2 only (its socket to keyhost on 0 and 1), none
/// of what keyhost holds open without close-on-exec.
@Suite struct LedgerProcessDescriptorTests {
    @Test func thePipeChildInheritsOnlyZeroToTwo() throws {
        let (leaked, marker) = try ChildDescriptors.openLeakable()
        defer { close(leaked); unlink(marker) }
        let tag = "\(UInt32.random(in: 1...UInt32.max))"  // sleep's fraction: this test's child, no other
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-pipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Stands in for keyhost-ledger: never answers "ready", so LedgerProcess waits while the test looks.
        let script = dir.appendingPathComponent("keyhost-ledger").path
        _ = FileManager.default.createFile(atPath: script, contents: Data("#!/bin/sh\nexec /bin/sleep 1000.\(tag)\n".utf8))
        chmod(script, 0o755)

        let finished = DispatchSemaphore(value: 0)
        let opening = Opening()
        DispatchQueue.global().async {
            opening.finish(Result { try LedgerProcess(location: PostgresLocation(user: "u", host: "127.0.0.1", database: "d"), issuers: [], worker: Fixtures.worker, program: script) })
            finished.signal()
        }
        let child = try #require(ChildDescriptors.waitForChild(of: getpid(), arguments: ["/bin/sleep", "1000.\(tag)"], while: { !opening.isDone }))
        let held = ChildDescriptors.descriptors(of: child)
        kill(child, SIGKILL)
        finished.wait()
        #expect(Set(held.keys) == [0, 1, 2], "the child holds \(held)")
        #expect(!held.values.contains(marker))
        #expect(held[0] == held[1] && held[0]?.hasPrefix("socket:") == true, "\(held)")
    }
}

/// The outcome of opening on another thread.
final class Opening: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<LedgerProcess, Error>?
    var isDone: Bool { lock.withLock { result != nil } }
    func finish(_ outcome: Result<LedgerProcess, Error>) { lock.withLock { result = outcome } }
}
