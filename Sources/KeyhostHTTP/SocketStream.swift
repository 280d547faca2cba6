#if canImport(Glibc)
import Glibc
#endif

/// Buffered reads and writes over one connected TCP socket, plain or TLS. Every call ends by `deadline`: a
/// read that would wait waits until then at most, and a read past it fails even when bytes are ready, so a
/// peer that never stops sending (notifications, 1-byte chunks) cannot stretch it. A persistent connection
/// (Electrum) moves the deadline before each exchange, a one-shot HTTP request sets it once for the whole
/// exchange. The stream owns the socket and closes it.
// @unchecked: one thread at a time uses a stream (a request, or the Electrum pool's slot under its lock); an idle
// one sits in `HTTPConnectionPool` under its Mutex and moves between threads only through it.
public final class SocketStream: @unchecked Sendable {
    private var fd: Int32
    private var tls: TLSSession?
    private var buffer = [UInt8]()
    private var start = 0
    private var atEnd = false
    /// Bytes received so far: a kept-alive connection that fails before its answer's first byte was stale.
    private(set) var bytesReceived = 0

    /// Monotonic nanoseconds after which a waiting call throws "timed out".
    var deadline: UInt64 {
        didSet { tls?.deadline = deadline }
    }

    init(fd: Int32, deadline: UInt64, tls: TLSSession?) {
        self.fd = fd
        self.deadline = deadline
        self.tls = tls
    }

    /// Connects to `host`:`port` (through `proxy` when given) and, with `tls`, handshakes (certificate checked
    /// as `tls` says), all within `timeout` seconds. Through a `socks5h` proxy `host` is never looked up here.
    public static func connect(host: String, port: Int, tls: TLSContext?, timeout: Double, proxy: Proxy? = nil) throws -> SocketStream {
        let deadline = monotonicDeadline(after: timeout)
        let stream = try proxy.map { try connect(toProxy: $0, deadline: deadline) }
            ?? SocketStream(fd: try HTTPTransport.connect(host: host, port: port, deadline: deadline), deadline: deadline, tls: nil)
        do {
            if let proxy { try ProxyTunnel.open(stream, through: proxy, to: host, port: port) }
            if let tls { try stream.startTLS(tls, host: host) }
        } catch {
            stream.close()
            throw error
        }
        return stream
    }

    /// A plain connection to `proxy` itself, within `timeout` seconds (a forwarded plain-http request goes on it).
    static func connect(toProxy proxy: Proxy, timeout: Double) throws -> SocketStream {
        try connect(toProxy: proxy, deadline: monotonicDeadline(after: timeout))
    }

    /// The one place a proxy is connected to; a failure names the proxy.
    private static func connect(toProxy proxy: Proxy, deadline: UInt64) throws -> SocketStream {
        do {
            return SocketStream(fd: try HTTPTransport.connect(host: proxy.host, port: proxy.port, deadline: deadline), deadline: deadline, tls: nil)
        } catch let error as HTTPTransportError where error.kind != .timedOut {
            throw HTTPTransportError(.proxy, "cannot reach the proxy \(proxy): \(error.message)")
        }
    }

    /// Handshakes TLS with `host` over the connected socket (nothing may be buffered: TLS reads the socket itself).
    private func startTLS(_ context: TLSContext, host: String) throws {
        precondition(available == 0 && tls == nil, "TLS starts on a fresh stream")
        tls = try TLSSession(context: context, fd: fd, host: host, deadline: deadline)
    }

    deinit { close() }

    /// Ends the connection (the TLS session first: it only borrows the socket). Calls after this fail.
    public func close() {
        tls = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        atEnd = true
    }

    /// Gives the calls that follow `seconds` to finish.
    public func setTimeout(_ seconds: Double) {
        deadline = monotonicDeadline(after: seconds)
    }

    /// The SHA-256 fingerprint of the certificate the TLS peer showed (nil for plain TCP).
    public var peerCertificateFingerprint: [UInt8]? { tls?.peerFingerprint }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw HTTPTransportError(.connectionLost, "the connection is closed") }
        if let tls { return try tls.write(bytes) }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 { offset += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try waitForSocket(fd, events: POLLOUT, deadline: deadline)
            } else if n < 0 && errno != EINTR {
                throw HTTPTransportError.fromErrno(errno, during: "send")
            }
        }
    }

    /// Reads more bytes into the buffer; false at the end of the stream. Past the deadline it throws "timed out"
    /// whether or not bytes are ready (`peerHasClosed` alone, which never waits, looks anyway).
    private func fill(checkingDeadline: Bool = true) throws -> Bool {
        if atEnd { return false }
        if checkingDeadline && monotonicNow() >= deadline { throw HTTPTransportError.timedOut }
        if start > 0 && start >= buffer.count / 2 { buffer.removeFirst(start); start = 0 }
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n: Int
            if let tls {
                n = try chunk.withUnsafeMutableBytes { try tls.read($0) }
            } else {
                n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { try waitForSocket(fd, events: POLLIN, deadline: deadline); continue }
                    if errno == EINTR { continue }
                    throw HTTPTransportError.fromErrno(errno, during: "recv")
                }
            }
            if n == 0 { atEnd = true; return false }
            bytesReceived += n
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
    }

    private var available: Int { buffer.count - start }

    /// Whether bytes were read from the peer that no call has consumed yet.
    var hasBufferedBytes: Bool { available > 0 }

    /// One line without its LF (and without a CR before it). A line over `limit` bytes throws `.tooLarge`
    /// as soon as that many bytes are buffered, so a peer cannot make the buffer grow without bound.
    public func readLine(limit: Int) throws -> [UInt8] {
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: 10) {
                var end = newline
                if end > start && buffer[end - 1] == 13 { end -= 1 }
                guard end - start <= limit else { throw lineTooLong(limit) }
                let line = Array(buffer[start..<end])
                start = newline + 1
                return line
            }
            searched = buffer.count
            guard available <= limit else { throw lineTooLong(limit) }
            let before = start
            guard try fill() else {
                throw HTTPTransportError(.connectionLost, available == 0 ? "the connection was closed"
                    : "connection lost (the answer is cut short)")
            }
            searched -= before - start  // fill may have compacted the buffer
        }
    }

    private func lineTooLong(_ limit: Int) -> HTTPTransportError {
        HTTPTransportError(.tooLarge, "a line longer than \(byteCount(limit))")
    }

    func read(exactly count: Int) throws -> [UInt8] {
        while available < count {
            guard try fill() else { throw HTTPTransportError(.connectionLost, "connection lost (the body is cut short)") }
        }
        let data = Array(buffer[start..<(start + count)])
        start += count
        return data
    }

    func readToEnd(limit: Int) throws -> [UInt8] {
        while try fill() {
            guard available <= limit else { throw HTTPTransportError(.tooLarge, "response body larger than \(byteCount(limit))") }
        }
        let data = Array(buffer[start...])
        start = buffer.count
        return data
    }

    /// Whether the peer has ended the connection while it sat idle (a server's idle timeout). Bytes that arrived
    /// meanwhile (a notification) stay buffered for the next read. Never waits.
    public func peerHasClosed() -> Bool {
        guard fd >= 0 else { return true }
        if atEnd { return true }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        let saved = deadline
        defer { deadline = saved }
        deadline = monotonicNow()  // a read that would wait times out at once instead
        do { return try !fill(checkingDeadline: false) } catch let error as HTTPTransportError where error.kind == .timedOut { return false } catch { return true }
    }
}

/// "16 MiB", "64 KiB" or "100 bytes", for limits in messages.
func byteCount(_ n: Int) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
    if n >= 1 << 10 && n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
    return "\(n) bytes"
}

/// The monotonic time `seconds` from now, in nanoseconds (negative and huge values clamped).
func monotonicDeadline(after seconds: Double) -> UInt64 {
    let clamped = min(max(0, seconds), 100 * 365 * 86400)
    return monotonicNow() + UInt64(clamped * 1_000_000_000)
}
