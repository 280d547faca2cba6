#if canImport(Glibc)
import Glibc
#endif

/// Writing a whole file at once: the bytes go to a temporary file in the same folder, which is then renamed
/// over `path`, so readers see the old file or the new one, never a part (as Foundation's `.atomic` writes did).
public enum AtomicFile {
    /// Why the file could not be written: the system's reason (`No such file or directory`, `Is a directory`).
    public struct WriteError: Error, Equatable, CustomStringConvertible {
        public let path: String
        public let problem: String
        /// The errno behind `problem` (EEXIST: `replace` was false and the file exists).
        public let code: Int32
        public var description: String { "\(path): \(problem)" }

        init(path: String, problem: String, code: Int32) {
            self.path = path
            self.problem = problem
            self.code = code
        }
    }

    /// Writes `bytes` to `path`; a new file gets `mode` less the umask. With `replace` false an existing
    /// `path` is left alone and the write fails with EEXIST's reason ("File exists"), also when another
    /// process creates it meanwhile: the finished file is linked in, which never replaces. With `replace`,
    /// an existing `path` that is not a regular file (a FIFO, a device) is refused (`RegularFile`), never
    /// renamed over.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o666, replace: Bool = true,
                             temporary: String? = nil, beforeRename: (() throws -> Void)? = nil) throws {
        try bytes.withUnsafeBytes { try write($0, to: path, mode: mode, replace: replace, temporary: temporary, beforeRename: beforeRename) }
    }

    /// The same from memory the caller owns (and wipes: pairing keys, wallets), so no copy of it is left behind.
    /// `temporary`: a fixed name for the temporary file (a stale one is replaced) instead of a fresh one per
    /// write; `beforeRename` runs once the temporary file is complete (a test throws there to play a crash).
    public static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t = 0o666, replace: Bool = true,
                             temporary fixed: String? = nil, beforeRename: (() throws -> Void)? = nil) throws {
        if replace, let problem = RegularFile.problem(at: path) { throw WriteError(path: path, problem: problem, code: EINVAL) }
        let temporary = fixed ?? "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        if fixed != nil { unlink(temporary) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(path) }
        if let code = WriteAll.write(fd, bytes) {
            close(fd)
            unlink(temporary)
            throw WriteError(path: path, problem: String(cString: strerror(code)), code: code)
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
        try beforeRename?()
        // link never replaces an existing file (EEXIST); rename does.
        guard (replace ? rename(temporary, path) : link(temporary, path)) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
        if !replace { unlink(temporary) }
        // The new name must survive a crash too, not only the bytes: sync the folder that holds it.
        let folder = open(Self.folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 { _ = fsync(folder); close(folder) }
    }

    /// The folder `path` is in ("." for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The error for the call that just failed, errno read before anything can change it.
    private static func failure(_ path: String) -> WriteError {
        let code = errno
        return WriteError(path: path, problem: String(cString: strerror(code)), code: code)
    }

}
