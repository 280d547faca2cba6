#if canImport(Glibc)
import Glibc
#endif

/// The one check for a path a user named where keyhost keeps state (a checkpoint, pairings, a card's state):
/// only a regular file, or none yet, will do. Opening a FIFO blocks until a writer comes (for ever), and writing
/// a new file over a device or socket by rename would replace it.
public enum RegularFile {
    /// Why the file at `path` cannot hold state ("is a FIFO (named pipe), not a regular file"), or nil when it
    /// is a regular file or does not exist. A symbolic link is judged by what it points to.
    public static func problem(at path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }  // absent (or unreadable: the open that follows says why)
        return problem(mode: info.st_mode)
    }

    /// Why a file of `mode` (stat's st_mode) cannot hold state, or nil for a regular file.
    public static func problem(mode: mode_t) -> String? {
        let kind: String
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: kind = "a FIFO (named pipe)"
        case S_IFDIR: kind = "a directory"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a file"
        }
        return "is \(kind), not a regular file: name a file (or a path where none exists yet) for keyhost to keep it in"
    }
}
