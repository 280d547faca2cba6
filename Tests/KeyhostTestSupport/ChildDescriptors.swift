import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a child process holds open, read from /proc while it runs: for the tests that check every child
/// keyhost starts gets descriptors 0-2 and nothing else of its parent's.
public enum ChildDescriptors {
    /// A file this process holds open without close-on-exec, at a descriptor of 200 or more (so no
    /// descriptor another test uses is replaced); close it with `close`.
    public static func openLeakable() throws -> (fd: Int32, path: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-leak-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: path, contents: Data("marker".utf8))
        let first = open(path, O_RDONLY)
        guard first >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(first) }
        let fd = fcntl(first, F_DUPFD, 200)  // F_DUPFD, unlike F_DUPFD_CLOEXEC, leaves close-on-exec off
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return (fd, path)
    }

    /// The command line of `pid` (arguments split at NUL), or nil when it is gone.
    public static func commandLine(_ pid: pid_t) -> [String]? {
        guard let data = ProcFile.bytes("/proc/\(pid)/cmdline") else { return nil }
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    /// The parent of `pid` from /proc/PID/stat, or nil when it is gone.
    public static func parent(_ pid: pid_t) -> pid_t? {
        guard let text = ProcFile.text("/proc/\(pid)/stat") else { return nil }
        // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// Waits (polling /proc, no clock) until a child of `parent` runs with exactly `arguments`, and returns it.
    /// Gives up, returning nil, if `stillWaiting` says the wait is over.
    public static func waitForChild(of parent: pid_t, arguments: [String], while stillWaiting: () -> Bool) -> pid_t? {
        while stillWaiting() {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let pid = pid_t(entry), Self.parent(pid) == parent, commandLine(pid) == arguments else { continue }
                return pid
            }
            usleep(2000)
        }
        return nil
    }

    /// Each open descriptor of `pid` with what it refers to (a path, `pipe:[…]`, `socket:[…]`).
    public static func descriptors(of pid: pid_t) -> [Int32: String] {
        var out: [Int32: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
            guard let fd = Int32(entry) else { continue }
            out[fd] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)")) ?? "?"
        }
        return out
    }
}
