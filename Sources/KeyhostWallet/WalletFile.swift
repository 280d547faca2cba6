#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The wallet file's permissions, settled before SQLite opens it: a wallet lists bearer tokens, so
/// nobody but its owner may read it.
enum WalletFile {
    /// Creates `path` as an empty 0600 file if it does not exist; refuses an existing one that group
    /// or others can read or write. SQLite gives the `-wal` and `-shm` files the database file's
    /// mode, so they inherit the 0600.
    static func prepare(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            // open()'s mode goes through the umask, which can only take bits away; fchmod makes
            // it exactly 0600 whatever the umask is.
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else {
                throw WalletError.store("cannot set the mode of the new wallet \(path) to 0600: \(errorText())")
            }
            return
        }
        let createError = errno
        guard createError == EEXIST else {
            throw WalletError.store("cannot create the wallet \(path): \(errorText(createError))")
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw WalletError.store("cannot read the wallet \(path): \(errorText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw WalletError.store("the wallet \(path) is not a regular file")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw WalletError.permissions(
                "the wallet \(path) can be read or written by other users (mode \(octal(mode))); it holds bearer tokens: run 'chmod 600 \(path)' and try again")
        }
    }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(UInt32(mode), radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
