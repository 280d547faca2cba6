#if canImport(Glibc)
import Glibc
#endif

import KeyhostFiles

/// Reads scripts (and token files) without Foundation, which would cost start-up time.
enum SourceFile {
    /// The largest script or token file read; a bigger one is refused while reading, before any parser runs.
    static let limit = 16 * BoundedFile.mebibyte

    static func read(_ path: String) throws -> [UInt8] {
        try BoundedFile.read(path, limit: limit)
    }

    static func readStandardInput() throws -> [UInt8] {
        try BoundedFile.readStandardInput(limit: limit)
    }

    /// Blanks a first line starting with '#' (a shebang), keeping line numbers, as lua.c does.
    static func strippingShebang(_ source: [UInt8]) -> [UInt8] {
        guard source.first == UInt8(ascii: "#") else { return source }
        guard let newline = source.firstIndex(of: UInt8(ascii: "\n")) else { return [] }
        return Array(source[newline...])
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
