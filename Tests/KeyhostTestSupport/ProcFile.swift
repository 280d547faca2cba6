import KeyhostFiles

/// Reads /proc files with plain read(2) (through `BoundedFile`): they vanish with their process, and
/// Foundation's file reader leaks its buffer when a read fails half-way (LeakSanitizer reports it in the
/// sanitizer job).
public enum ProcFile {
    /// The file's bytes, or nil when it cannot be read (its process is gone).
    public static func bytes(_ path: String) -> [UInt8]? {
        try? BoundedFile.read(path, limit: BoundedFile.mebibyte)
    }

    /// The file as text, NULs (the separators of cmdline and environ) kept; nil when it cannot be read.
    public static func text(_ path: String) -> String? {
        bytes(path).map { String(decoding: $0, as: UTF8.self) }
    }
}
