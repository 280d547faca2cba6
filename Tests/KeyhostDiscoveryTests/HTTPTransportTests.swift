import Foundation
import KeyhostTestSupport
import Testing
@testable import KeyhostDiscovery
@testable import KeyhostHTTP

/// Fetches `url` through an HTTPClient and returns the response (no retries).
private func get(_ url: String, options: HTTPOptions = HTTPOptions(timeout: 120, maxRetries: 0)) throws -> HTTPResponse {
    let client = try HTTPClient(options: options)
    return try client.fetch(HTTPRequest(url: URL(string: url)!, displayURL: url, subject: "x")) { $0 }
}

@Suite("HTTP transport", .serialized)
struct HTTPTransportTests {
    @Test("Chunked bodies (with extensions and trailers) are reassembled; headers are case-insensitive")
    func chunked() throws {
        let server = try TestHTTPServer { _ in
            .raw("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nX-Thing: a\r\nx-thing: b\r\n\r\n"
                + "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n")
        }
        defer { server.stop() }
        let response = try get(server.baseURL + "/chunked?x=1")
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello 0123456789")
        #expect(response.header("X-THING") == "a, b")
        #expect(server.requests.first?.target == "/chunked?x=1")
        #expect(server.requests.first?.headers["host"] == "127.0.0.1:\(server.port)")
        #expect(server.requests.first?.headers["connection"] == nil)  // kept alive (KeepAliveTests)
    }

    @Test("A body without length runs to EOF; a cut-short body is an error, never a short answer")
    func framing() throws {
        let eof = try TestHTTPServer { _ in .raw("HTTP/1.1 200 OK\r\n\r\n{\"a\":1}") }
        defer { eof.stop() }
        #expect(String(decoding: try get(eof.baseURL).body, as: UTF8.self) == "{\"a\":1}")

        let short = try TestHTTPServer { _ in .raw("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") }
        defer { short.stop() }
        let error = discoveryError { _ = try get(short.baseURL + "/p") }
        guard case .unreachable(let url, _, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(url == short.baseURL + "/p" && detail.contains("connection lost"), "\(detail)")

        let bad = try TestHTTPServer { _ in .raw("SSH-2.0-OpenSSH\r\n\r\n") }
        defer { bad.stop() }
        let badError = discoveryError { _ = try get(bad.baseURL) }
        guard case .unreachable(_, _, let badDetail) = badError else { Issue.record("got \(String(describing: badError))"); return }
        #expect(badDetail.contains("not an HTTP/1.x answer"), "\(badDetail)")
    }

    @Test("POST bodies carry Content-Type and Content-Length")
    func post() throws {
        let server = try TestHTTPServer { request in .json("{\"echo\":\(String(decoding: request.body, as: UTF8.self))}") }
        defer { server.stop() }
        let client = try HTTPClient(options: HTTPOptions(timeout: 120, maxRetries: 0))
        let url = server.baseURL + "/rpc"
        let response = try client.fetch(HTTPRequest(url: URL(string: url)!, method: "POST", body: Data("[1,2]".utf8),
                                                    contentType: "application/json", displayURL: url, subject: "x")) { $0 }
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"echo\":[1,2]}")
        #expect(server.requests.first?.headers["content-type"] == "application/json")
        #expect(server.requests.first?.headers["content-length"] == "5")
        #expect(server.requests.first?.method == "POST")
    }

    @Test("URLs: default ports, IPv6 literals, paths and queries")
    func targets() throws {
        let a = try HTTPTransport.target(of: URL(string: "https://example.org/api?q=1")!)
        #expect(a.https && a.host == "example.org" && a.port == 443 && a.pathAndQuery == "/api?q=1" && a.authority == "example.org")
        let b = try HTTPTransport.target(of: URL(string: "http://[::1]:8080")!)
        #expect(!b.https && b.host == "::1" && b.port == 8080 && b.pathAndQuery == "/" && b.authority == "[::1]:8080")
        #expect(throws: HTTPTransportError.self) { try HTTPTransport.target(of: URL(string: "ftp://example.org/")!) }
    }

    @Test("HTTPS: an untrusted certificate fails verification; trusting it through caFile succeeds")
    func tls() throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        let url = "https://localhost:\(server.port)/address/x"

        let error = discoveryError { _ = try get(url) }
        guard case .unreachable(let shown, _, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(shown == url)
        #expect(detail.contains("certificate verify failed"), "\(detail)")

        var options = HTTPOptions(timeout: 120, maxRetries: 0)
        options.caFile = server.certificatePath
        let response = try get(url, options: options)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"path\":\"/address/x\"}")

        // The certificate names localhost only: the same server as 127.0.0.1 is refused even when trusted.
        let mismatch = discoveryError { _ = try get("https://127.0.0.1:\(server.port)/", options: options) }
        guard case .unreachable(_, _, let mismatchDetail) = mismatch else { Issue.record("got \(String(describing: mismatch))"); return }
        #expect(mismatchDetail.contains("certificate verify failed"), "\(mismatchDetail)")

        let missing = discoveryError {
            var bad = options
            bad.caFile = server.directory + "/nothing.pem"
            _ = try get(url, options: bad)
        }
        guard case .unreachable(_, _, let missingDetail) = missing else { Issue.record("got \(String(describing: missing))"); return }
        #expect(missingDetail.contains("cannot load CA file"), "\(missingDetail)")
    }
}

/// An HTTPS server on 127.0.0.1 (Python's http.server wrapped in ssl) with a self-signed certificate made by the
/// openssl CLI in a temporary directory. Every GET answers {"path": <path>}.
final class TLSTestServer {
    let directory: String
    let port: Int
    private let process: Process
    var certificatePath: String { directory + "/cert.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "keyhost-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.run("/usr/bin/env", ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                      "-nodes", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1",
                                      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"])
        let script = """
        import http.server, json, ssl, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps({"path": self.path}, separators=(",", ":")).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
        try script.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let venv = root.appendingPathComponent(".venv/bin/python").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3")
        process.arguments = [directory + "/server.py", directory + "/cert.pem", directory + "/key.pem"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port, printed once the server listens.
        var line = Data()
        while !line.contains(10) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw POSIXError(.EIO)
        }
        self.port = port
    }

    func stop() {
        // SIGKILL: the child may inherit a mask that blocks SIGTERM from the thread that spawned it.
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }
}
