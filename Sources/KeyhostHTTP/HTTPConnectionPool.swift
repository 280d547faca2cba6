import Synchronization

/// Idle HTTP/1.1 connections kept for the next request to the same origin (scheme, host, port): a request
/// takes one, and gives it back when its answer was read whole and neither side asked to close. At most
/// `maxIdlePerOrigin` wait per origin; the connections in use are bounded by the callers' own parallelism.
///
/// Only for idempotent requests: a kept connection the server closed meanwhile is noticed when the request
/// fails before the answer's first byte, and the request is sent once more on a fresh connection.
public final class HTTPConnectionPool: Sendable {
    public let maxIdlePerOrigin: Int
    private let idle = Mutex<[String: [SocketStream]]>([:])
    private let opened = Mutex(0)

    public init(maxIdlePerOrigin: Int) {
        self.maxIdlePerOrigin = max(1, maxIdlePerOrigin)
    }

    deinit { closeAll() }

    /// Connections this pool's requests have opened (not counting reuses).
    public var connectionsOpened: Int { opened.withLock { $0 } }

    func countOpened() { opened.withLock { $0 += 1 } }

    /// An idle connection to `origin` the server has not closed, if there is one.
    func take(_ origin: String) -> SocketStream? {
        while let stream = idle.withLock({ connections -> SocketStream? in connections[origin]?.popLast() }) {
            if !stream.peerHasClosed() { return stream }
            stream.close()
        }
        return nil
    }

    /// Keeps `stream` for the next request to `origin`, or closes it when enough already wait.
    func giveBack(_ stream: SocketStream, to origin: String) {
        let kept = idle.withLock { connections -> Bool in
            guard connections[origin, default: []].count < maxIdlePerOrigin else { return false }
            connections[origin, default: []].append(stream)
            return true
        }
        if !kept { stream.close() }
    }

    /// Closes every idle connection.
    public func closeAll() {
        let all = idle.withLock { connections -> [SocketStream] in
            defer { connections = [:] }
            return connections.values.flatMap { $0 }
        }
        for stream in all { stream.close() }
    }
}
