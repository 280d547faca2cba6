import Foundation
import KeyhostTestSupport
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery
@testable import KeyhostHTTP

/// Persistent HTTP connections (issue 21): a scan opens at most `parallel` connections, not one per address, and
/// a connection the server has closed meanwhile costs a reconnect, never a failed request or a retry.
@Suite("HTTP keep-alive", .serialized)
struct KeepAliveTests {
    /// An Esplora-like server that answers every address "unused".
    private func unusedServer(keepAlive: Bool = true, dropsSilently: Bool = false) throws -> TestHTTPServer {
        try TestHTTPServer(keepAlive: keepAlive, dropsSilently: dropsSilently) { request in
            .json(esploraBody(String(request.path.dropFirst("/address/".count)), chain: 0, mempool: 0))
        }
    }

    private func scan(_ server: TestHTTPServer, parallel: Int, retries: Int = 0, keepAlive: Bool = true) throws -> DiscoveryResult {
        var http = HTTPOptions(maxConcurrentRequests: parallel, timeout: 120, maxRetries: retries)
        http.keepAlive = keepAlive
        let source = try EsploraUsageSource(baseURL: server.baseURL, http: http)
        return try DiscoveryEngine(scheme: try .bip(purpose: 84, coin: .bitcoin), keys: try TestWallet.keys(), usage: source,
                                   options: DiscoveryOptions(receiveGapLimit: 40, changeGapLimit: 40)).run()
    }

    @Test("A scan of 80 addresses over 4 parallel requests uses at most 4 connections", arguments: [1, 4])
    func boundedConnections(parallel: Int) throws {
        let server = try unusedServer()
        defer { server.stop() }
        let result = try scan(server, parallel: parallel)
        #expect(result.totals.addressesChecked == 80)
        #expect(server.requests.count == 80)
        #expect(server.connections <= parallel, "\(server.connections) connections for \(parallel) in flight")
        #expect(server.requests.allSatisfy { $0.headers["connection"] == nil })
    }

    @Test("Without keep-alive every request has its own connection and says Connection: close")
    func oneShot() throws {
        let server = try unusedServer(keepAlive: false)
        defer { server.stop() }
        let result = try scan(server, parallel: 2, keepAlive: false)
        #expect(server.connections == result.totals.addressesChecked)
        #expect(server.requests.allSatisfy { $0.headers["connection"] == "close" })
    }

    @Test("A kept connection the server closed after its answer is replaced without a retry")
    func staleConnections() throws {
        let server = try unusedServer(dropsSilently: true)
        defer { server.stop() }
        // No retries allowed: a request sent on a dead connection and not resent on a fresh one would fail the scan.
        let result = try scan(server, parallel: 1, retries: 0)
        #expect(result.totals.addressesChecked == 80)
        #expect(server.requests.count == 80)
    }

    @Test("An answer with Connection: close or from HTTP/1.0 ends its connection, even when the server keeps it open")
    func notReused() throws {
        let replies = [
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, close\r\n\r\n{}",
            "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        ]
        for reply in replies {
            let server = try TestHTTPServer(keepAlive: true) { _ in .raw(reply) }
            defer { server.stop() }
            let pool = HTTPConnectionPool(maxIdlePerOrigin: 2)
            for _ in 0..<3 {
                let response = try HTTPTransport.send(url: URL(string: server.baseURL + "/x")!, method: "GET", headers: [], body: nil,
                                                      timeout: 120, tls: { try TLSContext(caFile: nil) }, pool: pool)
                #expect(String(decoding: response.body, as: UTF8.self) == "{}")
            }
            #expect(pool.connectionsOpened == 3, "\(reply.prefix(40))")
            #expect(server.connections == 3)
        }
    }

    @Test("A kept connection is reused for the next request to the same origin, not for another")
    func perOrigin() throws {
        let a = try unusedServer(), b = try unusedServer()
        defer { a.stop(); b.stop() }
        let pool = HTTPConnectionPool(maxIdlePerOrigin: 1)
        for server in [a, b, a, b, a] {
            _ = try HTTPTransport.send(url: URL(string: server.baseURL + "/address/x")!, method: "GET", headers: [], body: nil,
                                       timeout: 120, tls: { try TLSContext(caFile: nil) }, pool: pool)
        }
        #expect(a.connections == 1 && b.connections == 1)
        #expect(a.requests.count == 3 && b.requests.count == 2)
        #expect(pool.connectionsOpened == 2)
    }
}
