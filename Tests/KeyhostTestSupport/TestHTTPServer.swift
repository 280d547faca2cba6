import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for the discovery and CLI tests: one thread accepts, each connection is
/// served on its own queue item; every answer closes the connection, or with `keepAlive` the connection serves
/// requests until the client closes it. Enough of HTTP for keyhost's client, nothing more.
public final class TestHTTPServer: @unchecked Sendable {
    public struct Request {
        public var method: String
        public var target: String
        public var headers: [String: String]  // lowercased names
        public var body: Data

        public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
        public var query: [String: String] {
            let items = URLComponents(string: "http://x" + target)?.queryItems ?? []
            return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
        }
        public var json: Any? { try? JSONSerialization.jsonObject(with: body) }
    }

    public enum Reply {
        case respond(status: Int, headers: [String: String], body: String)
        /// Hold the connection open without answering (for timeouts).
        case hang
        /// Send these bytes as the whole answer, then close (for framing the server would not choose itself); a
        /// keep-alive server keeps the connection open.
        case raw(String)

        public static func json(_ body: String, status: Int = 200) -> Reply { .respond(status: status, headers: ["Content-Type": "application/json"], body: body) }
        public static func json(object: Any, status: Int = 200) -> Reply {
            .json(String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self), status: status)
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let handler: (Request) -> Reply
    private let keepAlive: Bool
    private let dropsSilently: Bool
    private let lock = NSLock()
    private var _connections = 0
    private var _requests = [Request]()
    private var inFlight = 0
    private var _maxInFlight = 0
    private var stopped = false
    private let acceptDone = DispatchSemaphore(value: 0)

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var requests: [Request] { lock.lock(); defer { lock.unlock() }; return _requests }
    /// TCP connections accepted so far.
    public var connections: Int { lock.lock(); defer { lock.unlock() }; return _connections }
    /// Most requests being handled at once.
    public var maxInFlight: Int { lock.lock(); defer { lock.unlock() }; return _maxInFlight }

    /// `keepAlive`: serve requests on a connection until the client closes it. `dropsSilently`: answer as if the
    /// connection stayed open (no `Connection: close`), then close it, as a server whose idle timeout struck.
    public init(keepAlive: Bool = false, dropsSilently: Bool = false, handler: @escaping (Request) -> Reply) throws {
        self.handler = handler
        self.keepAlive = keepAlive
        self.dropsSilently = dropsSilently
        (listener, port) = try LoopbackListener.open(backlog: 64)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        lock.unlock()
        guard !already else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        acceptDone.wait()
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    private func acceptLoop() {
        defer { acceptDone.signal() }
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            lock.lock()
            _connections += 1
            lock.unlock()
            DispatchQueue.global().async { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var pending = [UInt8]()
        while serveOne(fd, &pending) && keepAlive && waitForRequest(fd, pending) {}
    }

    /// Waits until the client sends more or closes (true when a request may follow); false when the server stops.
    private func waitForRequest(_ fd: Int32, _ pending: [UInt8]) -> Bool {
        guard pending.isEmpty else { return true }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !isStopped {
            if poll(&poller, 1, 50) > 0 { return true }
        }
        return false
    }

    /// Reads and answers one request; false when the connection is done.
    private func serveOne(_ fd: Int32, _ pending: inout [UInt8]) -> Bool {
        guard let request = readRequest(fd, &pending) else { return false }
        lock.lock()
        _requests.append(request)
        inFlight += 1
        _maxInFlight = max(_maxInFlight, inFlight)
        lock.unlock()
        let reply = handler(request)
        lock.lock()
        inFlight -= 1
        lock.unlock()
        switch reply {
        case .hang:
            // Hold the connection until the client gives up (it closes) or the server stops.
            var byte: UInt8 = 0
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let deadline = Date().addingTimeInterval(10)
            while !isStopped && Date() < deadline {
                if poll(&poller, 1, 50) > 0 {
                    if recv(fd, &byte, 1, 0) <= 0 { return false }
                }
            }
            return false
        case .respond, .raw:
            var all: [UInt8]
            if case .respond(let status, let headers, let body) = reply {
                let bytes = Array(body.utf8)
                var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n"
                for (name, value) in headers { head += "\(name): \(value)\r\n" }
                head += "Content-Length: \(bytes.count)\r\n\(keepAlive || dropsSilently ? "" : "Connection: close\r\n")\r\n"
                all = Array(head.utf8) + bytes
            } else if case .raw(let text) = reply {
                all = Array(text.utf8)
            } else {
                return false
            }
            var offset = 0
            while offset < all.count {
                let n = all[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return false }
                offset += n
            }
            // Raw bytes end the connection, unless it is kept alive: then the client alone decides whether the
            // answer it got ends it.
            if case .raw = reply { return keepAlive }
            return !dropsSilently
        }
    }

    /// One request from `pending` bytes and the socket; bytes after it stay in `pending`.
    private func readRequest(_ fd: Int32, _ pending: inout [UInt8]) -> Request? {
        var buffer = pending
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            if headerEnd == nil, let range = findCRLFCRLF(buffer) {
                headerEnd = range
                let head = String(decoding: buffer[0..<range], as: UTF8.self)
                for line in head.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    contentLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let end = headerEnd, buffer.count >= end + contentLength { break }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
        }
        let end = headerEnd!
        let lines = String(decoding: buffer[0..<(end - 4)], as: UTF8.self).components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ")
        guard first.count >= 2 else { return nil }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        pending = Array(buffer[(end + contentLength)...])
        return Request(method: String(first[0]), target: String(first[1]), headers: headers, body: Data(buffer[end..<(end + contentLength)]))
    }

    private func findCRLFCRLF(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

/// Records the delays an HTTP source asks to sleep, without sleeping.
public final class SleepRecorder: @unchecked Sendable {
    public init() {}
    private let lock = NSLock()
    private var _delays = [Double]()
    public var delays: [Double] { lock.lock(); defer { lock.unlock() }; return _delays }
    public var sleep: @Sendable (Double) -> Void { { [self] in lock.lock(); _delays.append($0); lock.unlock() } }
}

/// Thread-safe counter for handlers.
public final class Counter: @unchecked Sendable {
    public init() {}
    private let lock = NSLock()
    private var values = [String: Int]()
    /// Increments the count for `key` and returns the new value.
    public func bump(_ key: String) -> Int { lock.lock(); defer { lock.unlock() }; values[key, default: 0] += 1; return values[key]! }
    public func count(_ key: String) -> Int { lock.lock(); defer { lock.unlock() }; return values[key, default: 0] }
}
