#if canImport(Glibc)
import Glibc
#endif

/// Reads scripts without Foundation, which would cost start-up time.
enum SourceFile {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw ReadError(description: String(cString: strerror(errno))) }
        defer { fclose(file) }
        return try readAll(file)
    }

    static func readStandardInput() throws -> [UInt8] { try readAll(stdin) }

    private static func readAll(_ file: UnsafeMutablePointer<FILE>) throws -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n > 0 { result.append(contentsOf: buffer[0..<n]) }
            if n < buffer.count {
                if ferror(file) != 0 { throw ReadError(description: String(cString: strerror(errno))) }
                break
            }
        }
        return result
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
