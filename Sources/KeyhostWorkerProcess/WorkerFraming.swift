import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif

/// Messages between the wallet and its worker: a 4-byte big-endian length, then that many bytes.
/// Reads refuse a length above the caller's limit before allocating anything.
public enum WorkerFraming {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func write(_ bytes: [UInt8], to fd: Int32) throws {
        if let code = WriteAll.write(fd, frame(bytes)) {
            throw Failure(description: "cannot write to the worker pipe: \(String(cString: strerror(code)))")
        }
    }

    /// Writes one frame to a non-blocking `fd` by `deadline` (monotonic seconds): a worker that stops
    /// reading its request cannot hold the writer past the run's deadline.
    public static func write(_ bytes: [UInt8], to fd: Int32, deadline: Double) throws {
        let frame = frame(bytes)
        var written = 0
        while written < frame.count {
            let n = frame.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, frame.count - written) }
            if n > 0 { written += n; continue }
            guard n < 0, errno == EAGAIN || errno == EINTR else {
                throw Failure(description: "cannot write to the worker pipe: \(String(cString: strerror(n < 0 ? errno : EIO)))")
            }
            if errno == EINTR { continue }
            let left = deadline - monotonicSeconds()
            if left <= 0 { throw Timeout() }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pfd, 1, Int32(min(left * 1000 + 1, 1_000_000)))
        }
    }

    private static func frame(_ bytes: [UInt8]) -> [UInt8] {
        let n = UInt32(bytes.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
    }

    /// Reads one frame; `deadline` (monotonic seconds) bounds the wait, nil waits forever.
    public static func read(from fd: Int32, limit: Int, deadline: Double? = nil) throws -> [UInt8]? {
        guard let header = try readExactly(4, from: fd, deadline: deadline) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= limit else { throw Failure(description: "the worker sent \(length) bytes, more than the limit of \(limit)") }
        guard let body = try readExactly(length, from: fd, deadline: deadline) else {
            throw Failure(description: "the worker's message ended early")
        }
        return body
    }

    public struct Timeout: Error {}

    private static func readExactly(_ count: Int, from fd: Int32, deadline: Double?) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            if let deadline {
                let left = deadline - monotonicSeconds()
                if left <= 0 { throw Timeout() }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&pfd, 1, Int32(min(left * 1000 + 1, 1_000_000)))
                if r < 0 && errno != EINTR { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
                if r <= 0 { continue }
            }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, count - got) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read from the worker pipe: \(String(cString: strerror(errno)))")
            }
            if n == 0 {
                if got == 0 { return nil }
                throw Failure(description: "the worker's message ended early")
            }
            got += n
        }
        return bytes
    }

    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
