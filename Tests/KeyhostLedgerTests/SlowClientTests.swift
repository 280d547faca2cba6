import Foundation
import KeyhostCrypto
import KeyhostLedgerServer
import Testing

/// `keyhost token ledger serve` under clients that send their requests a byte at a time, with a
/// low descriptor limit: everyone else is still answered, and the slow requests are cut off at the
/// request deadline however steadily they drip.
@Suite(.serialized) struct SlowClientTests {
    /// 256, the limit the service starved under, or what leaves it room for 128 on a machine with
    /// so many cores that it keeps more for itself.
    static let descriptors = max(256, ConnectionLimits.reserved() + 128)
    static let sources = (2...11).map { "127.0.0.\($0)" }
    static let perSource = 30, perClient = 20
    /// Long enough that a connection the deadline cut is back before the others run out, however slowly a
    /// loaded machine reconnects them: with 2 s the service was never seen full on a machine at load 10
    /// (connections were cut faster than they came back), and the test waited for a state that did not come.
    static let requestTimeout = 20

    @Test func drippingClientsAreCappedAndCutOff() async throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let (server, base) = try Child.ledgerServer(
            db: "sqlite:" + db, issuers: [ProcessTests.issuerHex],
            options: ["--request-timeout", String(Self.requestTimeout), "--max-connections-per-client", String(Self.perClient)],
            descriptors: Self.descriptors)
        defer { server.kill(SIGTERM); server.wait() }
        let port = Int(base.split(separator: ":").last!)!
        let baseline = try Self.openDescriptors(server.pid)
        // What the server may hold of them: its total (the descriptor limit less what it keeps
        // for itself) or what the per-client limit lets ten addresses have, whichever is lower.
        let total = try ConnectionLimits.resolve(total: nil, descriptors: Self.descriptors).total
        let held = min(total, Self.sources.count * Self.perClient)

        // 300 connections that drip, and open again whenever the server closes one: the server
        // stays full for as long as the answers below take.
        let drips = Drippers(port: port, sources: Self.sources, perSource: Self.perSource)
        defer { drips.stop() }
        try #require(await eventually { (try? Self.openDescriptors(server.pid)) ?? 0 >= baseline + held },
                     "the server never held \(held) connections: \((try? Self.openDescriptors(server.pid)) ?? -1) descriptors open")

        let (health, healthAnswer) = try await HTTPTests.call(base, "GET", "/v1/health")
        #expect(health == 200 && healthAnswer["status"] as? String == "ok")
        let token = try Fixtures.token(value: 7)
        let (deposit, depositAnswer) = try await HTTPTests.call(base, "POST", "/v1/deposit", body: HTTPTests.body([try Fixtures.deposit(token).armored]))
        #expect(deposit == 200 && (depositAnswer["results"] as? [[String: Any]])?.first?["result"] as? String == "accepted", "\(depositAnswer)")

        // No more new connections: every one still open keeps dripping (a byte every 0.2 s, well
        // inside the 30 s idle timeout), so only the request deadline closes it.
        drips.stopReconnecting()
        #expect(await eventually { drips.open == 0 }, "\(drips.open) dripping connections still open")
        #expect(drips.opened >= Self.sources.count * Self.perSource)
        #expect(try await HTTPTests.call(base, "GET", "/v1/health").0 == 200)
        #expect(try await HTTPTests.tokens(base) == 1)
    }

    /// A total the descriptor limit cannot hold is refused at start, saying what fits.
    @Test func totalBeyondTheDescriptorLimitIsRefused() throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        #expect {
            _ = try Child.ledgerServer(db: "sqlite:" + db, issuers: [ProcessTests.issuerHex], options: ["--max-connections", "1000"], descriptors: Self.descriptors)
        } throws: { error in
            let text = "\(error)"
            return text.contains("--max-connections 1000 does not fit the descriptor limit (ulimit -n \(Self.descriptors)") && text.contains("give at most")
        }
        #expect {
            _ = try Child.ledgerServer(db: "sqlite:" + db, issuers: [ProcessTests.issuerHex], options: ["--request-timeout", "0"])
        } throws: { "\($0)".contains("--request-timeout must be a number of seconds from 0.1 to 86400") }
    }

    static func openDescriptors(_ pid: pid_t) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }
}

/// Loopback clients that send a deposit's head and then its body one byte every 0.2 s, each from
/// one of `sources` (any 127.0.0.0/8 address is this host). Until `stopReconnecting`, a connection
/// the server closes is opened again.
final class Drippers: @unchecked Sendable {
    private let lock = NSLock()
    private var openCount = 0, openedCount = 0
    private var reconnect = true, stopped = false
    private let done = DispatchSemaphore(value: 0)

    /// Connections open now, and opened in all.
    var open: Int { lock.withLock { openCount } }
    var opened: Int { lock.withLock { openedCount } }

    init(port: Int, sources: [String], perSource: Int) {
        Thread.detachNewThread { [self] in
            var connections: [(fd: Int32, source: String)] = []
            for source in sources { for _ in 0..<perSource { connections.append((-1, source)) } }
            while !lock.withLock({ stopped }) {
                let again = lock.withLock { reconnect }
                for i in connections.indices {
                    if connections[i].fd < 0 {
                        if again || lock.withLock({ openedCount }) < connections.count { connections[i].fd = Self.connect(port, from: connections[i].source) }
                        if connections[i].fd >= 0 { lock.withLock { openedCount += 1 } }
                    } else if !Self.drip(connections[i].fd) {
                        close(connections[i].fd)
                        connections[i].fd = -1
                    }
                }
                let live = connections.filter { $0.fd >= 0 }.count
                lock.withLock { openCount = live }
                usleep(200_000)
            }
            for connection in connections where connection.fd >= 0 { close(connection.fd) }
            done.signal()
        }
    }

    func stopReconnecting() { lock.withLock { reconnect = false } }

    func stop() {
        guard !lock.withLock({ let was = stopped; stopped = true; return was }) else { return }
        done.wait()
    }

    /// A connection from `source` that has sent a deposit's head, or -1.
    static func connect(_ port: Int, from source: String) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        // A full backlog drops the handshake, and a blocking connect would wait out its retries.
        var patience = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr(host)
            address.sin_port = UInt16(port).bigEndian
            return address
        }
        var local = address(source, 0), remote = address("127.0.0.1", port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 } }
            && withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) == 0 } }
        let head = "POST /v1/deposit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"chains\": [\""
        guard ok, send(fd, head, head.utf8.count, Int32(MSG_NOSIGNAL)) == head.utf8.count else {
            close(fd)
            return -1
        }
        return fd
    }

    /// One more body byte; false once the server has closed the connection.
    static func drip(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let read = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        if read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return false }
        byte = UInt8(ascii: "A")
        return send(fd, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == 1 || errno == EAGAIN || errno == EWOULDBLOCK
    }
}
