import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that hands each connection's socket to `handler` on a thread of its own, for
/// peers that misbehave over time (flooding, trickling) in ways a request/answer server cannot. The handler
/// should return once `stopped()` says so; `stop()` waits for every handler, so a client blocked on a
/// flooding peer is released by the connection closing.
public final class TestStreamServer: @unchecked Sendable {
    public let port: UInt16
    private let listener: Int32
    private let handler: (_ fd: Int32, _ stopped: () -> Bool) -> Void
    private let lock = NSLock()
    private var isStopped = false
    private let group = DispatchGroup()

    public init(handler: @escaping (_ fd: Int32, _ stopped: () -> Bool) -> Void) throws {
        self.handler = handler
        (listener, port) = try LoopbackListener.open(backlog: 16)
        group.enter()
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// Whether `stop()` was called.
    public var stopped: Bool { lock.lock(); defer { lock.unlock() }; return isStopped }

    /// Stops accepting, tells the handlers to end, and waits until they have.
    public func stop() {
        lock.lock()
        let already = isStopped
        isStopped = true
        lock.unlock()
        guard !already else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        group.wait()
    }

    private func acceptLoop() {
        defer { group.leave() }
        while !stopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            group.enter()
            Thread { [self] in
                defer { close(client); group.leave() }
                handler(client) { [self] in self.stopped }
            }.start()
        }
    }

    // MARK: - Helpers for handlers

    /// Reads until `needle` has arrived (or the peer closes); the bytes read.
    public static func read(_ fd: Int32, until needle: String) -> [UInt8] {
        var bytes = [UInt8]()
        var byte: UInt8 = 0
        let wanted = Array(needle.utf8)
        while recv(fd, &byte, 1, 0) == 1 {
            bytes.append(byte)
            if bytes.count >= wanted.count && Array(bytes.suffix(wanted.count)) == wanted { break }
        }
        return bytes
    }

    /// Sends all of `text`; false when the peer is gone.
    @discardableResult
    public static func send(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Sends `text` again and again, as fast as the peer takes it, until the server stops or the peer is gone.
    /// A send waits at most 50 ms at a time, so a stop is seen even while the peer reads nothing.
    public static func flood(_ fd: Int32, _ text: String, stopped: () -> Bool) {
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let block = Array(String(repeating: text, count: max(1, 16384 / max(1, text.utf8.count))).utf8)
        var offset = 0
        while !stopped() {
            let n = block[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset = (offset + n) % block.count; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
            return
        }
    }
}
