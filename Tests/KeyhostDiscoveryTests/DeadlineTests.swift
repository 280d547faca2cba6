import Foundation
import KeyhostTestSupport
import Testing
@testable import KeyhostDiscovery
@testable import KeyhostHTTP

/// Runs `body` on a thread of its own and waits at most `bound` seconds for it; nil when it did not end in
/// time (the caller then stops the server, which releases the body). The seconds it took otherwise.
private func ended(within bound: Double, _ body: @escaping @Sendable () -> Void) -> Double? {
    let done = DispatchSemaphore(value: 0)
    let start = Date()
    Thread { body(); done.signal() }.start()
    guard done.wait(timeout: .now() + bound) == .success else { return nil }
    return Date().timeIntervalSince(start)
}

/// A result a body on another thread hands back.
private final class Box<T>: @unchecked Sendable {
    var value: T?
}

/// Every request has a deadline that the peer's traffic cannot extend: a peer that keeps sending (notifications,
/// 1-byte chunks, interim answers, trailer fields) as fast as it can never made a read wait, and the deadline was
/// only looked at when one did, so such a peer kept a request going for ever (or until the 32 MiB cap).
@Suite("Deadlines that traffic cannot extend", .serialized)
struct DeadlineTests {
    static let deadline = 0.5
    /// Ten times the deadline: generous for a busy machine, far below "for ever".
    static let bound = 10 * deadline

    @Test("An Electrum server that answers server.version, then sends only notifications, fails the request as timed out")
    func electrumNotificationFlood() throws {
        let server = try TestStreamServer { fd, stopped in
            // server.version is the first call (id 0); after its answer, nothing but notifications.
            _ = TestStreamServer.read(fd, until: "\n")
            guard TestStreamServer.send(fd, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":[\"flooder 1.0\",\"1.4\"]}\n") else { return }
            TestStreamServer.flood(fd, "{\"jsonrpc\":\"2.0\",\"method\":\"blockchain.headers.subscribe\",\"params\":[{\"height\":1,\"hex\":\"00\"}]}\n",
                                   stopped: stopped)
        }
        let source = try ElectrumUsageSource(server: "tcp://127.0.0.1:\(server.port)", coin: .bitcoin,
                                             http: HTTPOptions(timeout: Self.deadline, maxRetries: 0))
        let address = try TestWallet.bip84(index: 0)
        let outcome = Box<Result<[Bool], Error>>()
        let took = ended(within: Self.bound) { outcome.value = Result { try source.usage(of: [address]) } }
        server.stop()
        #expect(took != nil, "the request was still running after \(Self.bound) s of notifications")
        guard case .failure(let error as DiscoveryError)? = outcome.value, case .unreachable(_, _, let detail) = error else {
            Issue.record("got \(String(describing: outcome.value))")
            return
        }
        #expect(detail.contains("timed out") && detail.contains("notification"), "\(detail)")
    }

    /// The ledger client's transport (OneShotHTTP) against `reply`, sent after the request has arrived.
    private func ledgerCall(_ reply: @escaping (_ fd: Int32, _ stopped: () -> Bool) -> Void) throws -> (took: Double?, error: String?) {
        let server = try TestStreamServer { fd, stopped in
            _ = TestStreamServer.read(fd, until: "\r\n\r\n")
            reply(fd, stopped)
        }
        let url = URL(string: "http://127.0.0.1:\(server.port)/v1/stats")!
        let outcome = Box<String>()
        let took = ended(within: Self.bound) {
            do {
                let answer = try OneShotHTTP.send("GET", url, timeout: Self.deadline)
                outcome.value = "an answer of \(answer.body.count) bytes"
            } catch {
                outcome.value = "\(error)"
            }
        }
        server.stop()
        return (took, outcome.value)
    }

    @Test("A chunked answer of endless 1-byte chunks is cut by the deadline, not by the 32 MiB cap")
    func oneByteChunks() throws {
        let (took, error) = try ledgerCall { fd, stopped in
            guard TestStreamServer.send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n") else { return }
            TestStreamServer.flood(fd, "1\r\n \r\n", stopped: stopped)
        }
        #expect(took != nil, "the answer was still being read after \(Self.bound) s")
        #expect(error == "timed out", "\(error ?? "nothing")")
    }

    @Test("Endless interim 100 Continue answers, or endless trailer fields, are cut by the deadline")
    func endlessHeads() throws {
        let interim = try ledgerCall { fd, stopped in TestStreamServer.flood(fd, "HTTP/1.1 100 Continue\r\n\r\n", stopped: stopped) }
        #expect(interim.took != nil && interim.error == "timed out", "\(interim)")
        let trailers = try ledgerCall { fd, stopped in
            guard TestStreamServer.send(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n") else { return }
            TestStreamServer.flood(fd, "X-Trailer: t\r\n", stopped: stopped)
        }
        #expect(trailers.took != nil && trailers.error == "timed out", "\(trailers)")
    }

    @Test("An answer trickled a byte at a time is cut by the whole answer's deadline")
    func trickle() throws {
        let (took, error) = try ledgerCall { fd, stopped in
            for byte in "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: " ", count: 100_000) {
                guard !stopped(), TestStreamServer.send(fd, String(byte)) else { return }
                usleep(20_000)
            }
        }
        #expect(took != nil, "the answer was still being read after \(Self.bound) s")
        #expect(error == "timed out", "\(error ?? "nothing")")
    }
}
