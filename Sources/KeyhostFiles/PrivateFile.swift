#if canImport(Glibc)
import Glibc
#endif

/// A file only its owner may read or write (a wallet, a ledger), settled before SQLite opens it.
/// SQLite gives `-wal` and `-shm` the database file's mode, so they inherit the 0600.
public enum PrivateFile {
    /// Why `prepare` refused; each store turns it into its own error.
    public enum Problem: Error, Equatable {
        /// The file could not be created or read (strerror text given).
        case system(String)
        case notRegular
        /// Group or others may read or write it: the mode, in octal.
        case shared(mode: String)
    }

    /// Creates `path` as an empty 0600 file if it does not exist (unless `create` is false: then a missing
    /// file is refused, for uses that only read); refuses an existing one that is not a regular file or that
    /// group or others can read or write.
    public static func prepare(_ path: String, what: String, create: Bool = true) throws {
        let fd = create ? open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) : -1
        if fd >= 0 {
            // open()'s mode goes through the umask, which can only take bits away; fchmod makes
            // it exactly 0600 whatever the umask is.
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw Problem.system("cannot set the mode of the new \(what) \(path) to 0600: \(errorText())") }
            return
        }
        if create {
            let createError = errno
            guard createError == EEXIST else { throw Problem.system("cannot create the \(what) \(path): \(errorText(createError))") }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw Problem.system("cannot read the \(what) \(path): \(errorText())") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Problem.notRegular }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            let digits = String(UInt32(mode), radix: 8)
            throw Problem.shared(mode: String(repeating: "0", count: max(0, 4 - digits.count)) + digits)
        }
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
