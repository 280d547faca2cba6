// URL, URLComponents and Data from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A failure below HTTP: name lookup, connecting, TLS, reading a malformed or oversized answer.
/// `message` is what error messages show after the URL.
public struct HTTPTransportError: Error, CustomStringConvertible {
    public enum Kind: Sendable { case timedOut, refused, hostNotFound, connectionLost, tls, proxy, badResponse, tooLarge, other }
    public var kind: Kind
    public var message: String
    /// A refused TLS certificate's SHA-256 fingerprint, for a hint on pinning it.
    public var certificateFingerprint: [UInt8]?
    init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    public var description: String { message }

    static let timedOut = HTTPTransportError(.timedOut, "timed out")

    static func fromErrno(_ code: Int32, during what: String) -> HTTPTransportError {
        switch code {
        case ECONNREFUSED: return HTTPTransportError(.refused, "connection refused")
        case ETIMEDOUT: return .timedOut
        case ECONNRESET, EPIPE: return HTTPTransportError(.connectionLost, "connection lost")
        case ENETUNREACH, EHOSTUNREACH: return HTTPTransportError(.other, "no route to host")
        default: return HTTPTransportError(.other, "\(what) failed: \(String(cString: strerror(code)))")
        }
    }
}

/// A monotonic clock in nanoseconds, for deadlines.
func monotonicNow() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Whether two header field names are the same (names are ASCII tokens, compared without case).
/// Whether two header names are the same (HTTP compares them without case).
public func sameHeaderName(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
}

/// Waits until `fd` is ready for `events` or `deadline` passes (then throws "timed out").
func waitForSocket(_ fd: Int32, events: Int32, deadline: UInt64) throws {
    while true {
        let now = monotonicNow()
        guard now < deadline else { throw HTTPTransportError.timedOut }
        let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
        var poller = pollfd(fd: fd, events: Int16(events), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready > 0 { return }  // readiness or an error condition: the next call reports which
        if ready < 0 && errno != EINTR { throw HTTPTransportError.fromErrno(errno, during: "poll") }
    }
}

/// Whether `host` is an IPv4 or IPv6 literal.
func isIPAddress(_ host: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}

/// A small blocking HTTP/1.1 client over POSIX sockets, with TLS through OpenSSL for https: keep-alive through
/// an `HTTPConnectionPool` or one request per connection, SOCKS5 and CONNECT proxies, Content-Length, chunked or
/// until-EOF bodies, one deadline for the whole exchange. It replaces URLSession so that the binary does not
/// load libcurl and its dependencies at start-up (docs/startup-and-size.md; AsyncHTTPClient would bring
/// swift-nio into every `keyhost run`).
public enum HTTPTransport {
    /// Largest body accepted; the services answer in kilobytes.
    public static let maxBodySize = 32 << 20
    /// Longest status line, header line or chunk-size line accepted.
    static let maxLineLength = 64 << 10
    /// Most header lines accepted.
    static let maxHeaderCount = 256

    struct Target {
        var https: Bool
        var host: String  // without IPv6 brackets
        var port: Int
        var pathAndQuery: String
        /// The Host header's value.
        var authority: String
    }

    static func target(of url: URL) throws -> Target {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw HTTPTransportError(.other, "not an http:// or https:// URL")
        }
        var host = components.percentEncodedHost ?? components.host ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = removingPercentEncoding(host) ?? host
        guard !host.isEmpty else { throw HTTPTransportError(.other, "the URL has no host") }
        let https = scheme == "https"
        let defaultPort = https ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65535).contains(port) else { throw HTTPTransportError(.other, "bad port \(port)") }
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        if let query = components.percentEncodedQuery { path += "?" + query }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return Target(https: https, host: host, port: port, pathAndQuery: path,
                      authority: port == defaultPort ? bracketed : "\(bracketed):\(port)")
    }

    /// Sends one request and reads the whole answer, within `timeout` seconds overall, through the proxy `proxies`
    /// choose for the URL.
    /// With a `pool`, the connection is taken from it and given back for the next request (keep-alive); without
    /// one, the request asks the server to close (`Connection: close`).
    public static func send(url: URL, method: String, headers: [(String, String)], body: Data?, timeout: Double,
                            tls: () throws -> TLSContext, proxies: ProxySettings = .direct, pool: HTTPConnectionPool? = nil) throws -> HTTPResponse {
        let target = try target(of: url)
        let proxy = proxies.proxy(scheme: target.https ? "https" : "http", host: target.host)
        // Plain http through an HTTP proxy is forwarded (absolute-form request); anything else is tunnelled,
        // since proxies commonly allow CONNECT only to port 443.
        let forwarded = proxy.flatMap { $0.kind == .http && !target.https ? $0 : nil }
        let origin = "\(target.https ? "https" : "http")://\(target.authority)"
        var requestHeaders = headers
        if let authorization = forwarded?.basicAuthorization { requestHeaders.append(("Proxy-Authorization", authorization)) }
        let requestTarget = forwarded == nil ? target.pathAndQuery : origin + target.pathAndQuery
        var request = Data(head(method, requestTarget, target.authority, headers: requestHeaders, body: body, keepAlive: pool != nil).utf8)
        if let body { request.append(body) }

        if let pool, let stream = pool.take(origin) {
            stream.setTimeout(timeout)
            let before = stream.bytesReceived
            do {
                return try exchange(stream, request, method: method, pool: pool, origin: origin)
            } catch let error as HTTPTransportError where error.kind == .connectionLost && stream.bytesReceived == before {
                // The server closed the kept connection while it sat idle: send once more on a fresh one.
                stream.close()
            } catch {
                stream.close()
                throw error
            }
        }
        let stream = try forwarded.map { try SocketStream.connect(toProxy: $0, timeout: timeout) }
            ?? SocketStream.connect(host: target.host, port: target.port, tls: target.https ? tls() : nil, timeout: timeout, proxy: proxy)
        pool?.countOpened()
        do {
            return try exchange(stream, request, method: method, pool: pool, origin: origin)
        } catch {
            stream.close()
            throw error
        }
    }

    /// The request line and header fields.
    private static func head(_ method: String, _ requestTarget: String, _ authority: String, headers: [(String, String)], body: Data?,
                             keepAlive: Bool) -> String {
        var head = "\(method) \(requestTarget) HTTP/1.1\r\nHost: \(authority)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" } else if method == "POST" { head += "Content-Length: 0\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        return head + "\r\n"
    }

    /// Writes `request` and reads its answer; gives the stream back to `pool` when the connection may carry
    /// another request, else closes it.
    private static func exchange(_ stream: SocketStream, _ request: Data, method: String, pool: HTTPConnectionPool?,
                                 origin: String) throws -> HTTPResponse {
        try request.withUnsafeBytes { try stream.write($0) }

        // Interim 1xx answers (100 Continue) are skipped.
        var status: Int, responseHeaders: [String: String], http11: Bool
        repeat {
            (status, responseHeaders, http11) = try readHead(stream)
        } while (100...199).contains(status)
        let header = { (name: String) in responseHeaders.first { sameHeaderName($0.key, name) }?.value }

        var responseBody = [UInt8]()
        var framed = true
        if status == 204 || status == 304 || method == "HEAD" {
            // No body by definition.
        } else if let encoding = header("Transfer-Encoding"), encoding.lowercased().contains("chunked") {
            responseBody = try readChunked(stream)
        } else if let lengthText = header("Content-Length") {
            guard let length = Int(lengthText.split(separator: ",").first.map { $0.trimmingWhitespace() } ?? ""),
                  length >= 0 else {
                throw HTTPTransportError(.badResponse, "bad Content-Length \"\(lengthText)\"")
            }
            guard length <= maxBodySize else { throw tooLarge() }
            responseBody = try stream.read(exactly: length)
        } else {
            responseBody = try stream.readToEnd(limit: maxBodySize)
            framed = false
        }
        let closing = header("Connection").map { $0.lowercased().split(separator: ",").contains { $0.trimmingWhitespace() == "close" } } ?? false
        if let pool, framed, http11, !closing, !stream.hasBufferedBytes {
            pool.giveBack(stream, to: origin)
        } else {
            stream.close()
        }
        return HTTPResponse(status: status, headers: responseHeaders, body: Data(responseBody))
    }

    private static func tooLarge() -> HTTPTransportError {
        HTTPTransportError(.tooLarge, "response body larger than \(maxBodySize >> 20) MiB")
    }

    /// `body` over the addresses `host` resolves to (TCP), or "host not found" with the resolver's reason; `hint`
    /// is added to that reason. An IP literal is parsed, never looked up (glibc would still ask nscd): a proxy at
    /// 127.0.0.1 costs no name service traffic at all.
    static func withAddresses<R>(host: String, port: Int, hint: String = "", _ body: (UnsafeMutablePointer<addrinfo>) throws -> R) throws -> R {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = isIPAddress(host) ? AI_NUMERICHOST : AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw HTTPTransportError(.hostNotFound, "host not found (\(reason))\(hint)")
        }
        defer { freeaddrinfo(first) }
        return try body(first)
    }

    /// Resolves `host` and connects to the first address that answers, each attempt bounded by `deadline`.
    static func connect(host: String, port: Int, deadline: UInt64) throws -> Int32 {
        try withAddresses(host: host, port: port) { try connect(first: $0, deadline: deadline) }
    }

    private static func connect(first: UnsafeMutablePointer<addrinfo>, deadline: UInt64) throws -> Int32 {
        var lastError = HTTPTransportError(.hostNotFound, "host not found (no addresses)")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            if fd < 0 { lastError = .fromErrno(errno, during: "socket"); continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var yes: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            do {
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                    guard errno == EINPROGRESS || errno == EINTR else { throw HTTPTransportError.fromErrno(errno, during: "connect") }
                    try waitForSocket(fd, events: POLLOUT, deadline: deadline)
                    var socketError: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
                    if socketError != 0 { throw HTTPTransportError.fromErrno(socketError, during: "connect") }
                }
                return fd
            } catch let error as HTTPTransportError {
                close(fd)
                if error.kind == .timedOut { throw error }
                lastError = error
            }
        }
        throw lastError
    }

    /// One status, header or chunk-size line as text, at most `maxLineLength` bytes.
    private static func readLine(_ stream: SocketStream) throws -> String {
        do {
            return String(decoding: try stream.readLine(limit: maxLineLength), as: UTF8.self)
        } catch let error as HTTPTransportError where error.kind == .tooLarge {
            throw HTTPTransportError(.badResponse, "header line longer than \(maxLineLength) bytes")
        } catch let error as HTTPTransportError where error.kind == .connectionLost {
            throw HTTPTransportError(.connectionLost, "connection lost (the answer is cut short)")
        }
    }

    /// The status, the header fields (names as sent; repeated fields joined with ", ") and whether the
    /// server speaks HTTP/1.1 (an HTTP/1.0 answer ends its connection).
    static func readHead(_ stream: SocketStream) throws -> (Int, [String: String], Bool) {
        let statusLine = try readLine(stream)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
            throw HTTPTransportError(.badResponse, "not an HTTP/1.x answer: \"\(statusLine.prefix(80))\"")
        }
        var headers = [String: String]()
        var count = 0
        while true {
            let line = try readLine(stream)
            if line.isEmpty { break }
            count += 1
            guard count <= maxHeaderCount else { throw HTTPTransportError(.badResponse, "more than \(maxHeaderCount) header fields") }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]).trimmingWhitespace()
            let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
            if let existing = headers.first(where: { sameHeaderName($0.key, name) }) {
                headers[existing.key] = existing.value + ", " + value
            } else {
                headers[name] = value
            }
        }
        return (status, headers, parts[0] != "HTTP/1.0")
    }

    private static func readChunked(_ stream: SocketStream) throws -> [UInt8] {
        var body = [UInt8]()
        while true {
            let line = try readLine(stream)
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace() } ?? ""
            guard !sizeText.isEmpty, sizeText.count <= 16, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw HTTPTransportError(.badResponse, "bad chunk size \"\(line.prefix(40))\"")
            }
            if size == 0 { break }
            guard body.count + size <= maxBodySize else { throw tooLarge() }
            body += try stream.read(exactly: size)
            guard try readLine(stream).isEmpty else { throw HTTPTransportError(.badResponse, "chunk not followed by CRLF") }
        }
        while try !readLine(stream).isEmpty {}  // trailer fields, ignored
        return body
    }
}
