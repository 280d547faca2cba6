import KeyhostCrypto
import KeyhostTokens
import Testing
import KeyhostWorkerProcess

/// The ways a verifier's worker is started: a fresh exec'd worker, a child of a fork server (a
/// wallet's runs), and a warm worker that ran another program before (a ledger's or a batch's).
/// Each maps this process's heap and libraries at other addresses, so a run that depended on an
/// address would give other effects in one of them.
final class WorkerKinds {
    let forked = WorkerRunner(forkingFrom: Keyhost.binary.path, runsPerServer: 1000)
    let warm = WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 1000)

    /// Leaves other objects, strings and loaded chunks behind in the warm worker before each run.
    static let filler = """
        local t = ... local keep = {}
        for i = 1, 3000 do keep[{}] = { i } end
        for i = 1, 200 do keep[i] = load("return " .. i .. " -- a filler chunk whose text is more than forty bytes")() end
        t.emit(#keep)
        """

    /// The run's outcome in each kind of worker, as comparable bytes with the kind's name.
    func outcomes(_ request: RunRequest) throws -> [(kind: String, outcome: [UInt8])] {
        let fresh = WorkerRunner(executable: Keyhost.binary.path).run(request)
        let child = forked.run(request)
        _ = warm.run(try WorkerRunnerTests.request(Self.filler, limits: request.limits))
        let warmed = warm.run(request)
        return [("exec'd worker", Self.bytes(fresh)), ("fork server child", Self.bytes(child)), ("warm worker", Self.bytes(warmed))]
    }

    /// Whether every kind of worker gave the same outcome; records the difference when not.
    @discardableResult
    func agree(_ request: RunRequest, _ name: String) throws -> [UInt8]? {
        let results = try outcomes(request)
        let first = results[0]
        var same = true
        for other in results.dropFirst() where other.outcome != first.outcome {
            same = false
            Issue.record("\(name): \(first.kind) and \(other.kind) differ:\n\(String(decoding: first.outcome, as: UTF8.self).prefix(400))\n\(String(decoding: other.outcome, as: UTF8.self).prefix(400))")
        }
        return same ? first.outcome : nil
    }

    /// A completed run as its effects' CBOR (hex, so a difference shows), a failed one as its kind and message.
    static func bytes(_ outcome: RunOutcome) -> [UInt8] {
        switch outcome {
        case .completed(let effects, let transferred):
            return Array("completed \(transferred) \(Hex.encode(CBOREncoder.encode(.array(effects))))".utf8)
        case .failed(let kind, let message):
            return Array("failed \(kind): \(message)".utf8)
        }
    }

    func stop() {
        forked.stop()
        warm.stop()
    }
}
