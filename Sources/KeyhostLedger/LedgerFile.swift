#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ledger file's permissions, settled before SQLite opens it: what was deposited, and by whom,
/// is the issuer's business only.
enum LedgerFile {
    /// Creates `path` as an empty 0600 file if missing; refuses an existing one that group or
    /// others can read or write. SQLite gives `-wal` and `-shm` the database file's mode.
    static func prepare(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            defer { close(fd) }
            // The umask can only take bits away from open()'s mode; fchmod makes it exactly 0600.
            guard fchmod(fd, 0o600) == 0 else { throw LedgerError.store("cannot set the mode of the new ledger \(path) to 0600: \(errorText())") }
            return
        }
        let createError = errno
        guard createError == EEXIST else { throw LedgerError.store("cannot create the ledger \(path): \(errorText(createError))") }
        var info = stat()
        guard stat(path, &info) == 0 else { throw LedgerError.store("cannot read the ledger \(path): \(errorText())") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw LedgerError.store("the ledger \(path) is not a regular file") }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw LedgerError(kind: "permissions", message: "the ledger \(path) can be read or written by other users (mode \(String(mode, radix: 8))); run 'chmod 600 \(path)' and try again")
        }
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
