#if canImport(Glibc)
import Glibc
#endif

/// Reads a file a user named into memory, refusing more than a limit. The limit is checked while reading,
/// not from the file's size alone: /dev/zero, a FIFO or a growing file has no size worth trusting, and an
/// unbounded read would end in an allocation failure (a crash) rather than an error.
public enum BoundedFile {
    /// One mebibyte, the unit limits are given and reported in.
    public static let mebibyte = 1 << 20

    /// Why a file could not be read; `description` is "<path>: <problem>" with the OS's strerror text.
    public struct ReadError: Error, Equatable, CustomStringConvertible {
        /// The path as given (or "standard input").
        public let path: String
        /// What went wrong, without the path.
        public let problem: String
        public var description: String { "\(path): \(problem)" }

        public init(path: String, problem: String) {
            self.path = path
            self.problem = problem
        }
    }

    /// The bytes of the file at `path`, at most `limit` of them. `regularOnly`: a file keyhost keeps state in
    /// (a checkpoint, pairings), where anything but a regular file is refused (`RegularFile`) without waiting:
    /// opening a FIFO would block until a writer came. Without it a FIFO or `/dev/stdin` is read like a file.
    public static func read(_ path: String, limit: Int, regularOnly: Bool = false) throws -> [UInt8] {
        var fd: Int32
        // O_NONBLOCK makes opening a FIFO return at once; reads of a regular file ignore it.
        let flags = O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0)
        repeat { fd = open(path, flags) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw ReadError(path: path, problem: lastError()) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(path: path, problem: lastError()) }
        if regularOnly, let problem = RegularFile.problem(mode: info.st_mode) { throw ReadError(path: path, problem: problem) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw ReadError(path: path, problem: "is a directory, not a file") }
        let isRegular = (info.st_mode & S_IFMT) == S_IFREG
        if isRegular && Int(info.st_size) > limit { throw tooLarge(path, limit) }
        return try readAll(fd, name: path, limit: limit, expected: isRegular ? Int(info.st_size) : 0)
    }

    /// Standard input to its end, at most `limit` bytes.
    public static func readStandardInput(limit: Int) throws -> [UInt8] {
        try readAll(STDIN_FILENO, name: "standard input", limit: limit, expected: 0)
    }

    /// A limit as people read it: "16 MiB", or bytes below one MiB.
    public static func describe(_ limit: Int) -> String {
        limit >= mebibyte && limit % mebibyte == 0 ? "\(limit / mebibyte) MiB" : "\(limit) bytes"
    }

    private static func readAll(_ fd: Int32, name: String, limit: Int, expected: Int) throws -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(min(expected, limit))
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        // The caller may be reading a secret (a mnemonic on standard input): leave no copy behind.
        defer { for i in buffer.indices { buffer[i] = 0 } }
        while true {
            // One byte past the limit is enough to know the file is too large.
            let wanted = min(chunk, limit - result.count + 1)
            let n = buffer.withUnsafeMutableBytes { readBytes(fd, $0.baseAddress, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadError(path: name, problem: lastError())
            }
            if n == 0 { return result }
            guard result.count + n <= limit else { throw tooLarge(name, limit) }
            result.append(contentsOf: buffer[0..<n])
        }
    }

    private static func tooLarge(_ path: String, _ limit: Int) -> ReadError {
        ReadError(path: path, problem: "file is larger than the limit of \(describe(limit))")
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// read(2), outside `BoundedFile` whose own `read` would shadow it.
private func readBytes(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
