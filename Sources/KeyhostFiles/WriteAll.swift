#if canImport(Glibc)
import Glibc
#endif

private let systemWrite = Glibc.write

/// The one write loop: all of the bytes, again after a short write or EINTR.
public enum WriteAll {
    /// Writes every byte of `bytes` to `fd`; nil when done, else the errno of the write that failed.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var written = 0
        while written < bytes.count {
            let n = systemWrite(fd, base + written, bytes.count - written)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return n < 0 ? errno : EIO }
            written += n
        }
        return nil
    }

    /// The same for an array.
    public static func write(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { write(fd, $0) }
    }
}
