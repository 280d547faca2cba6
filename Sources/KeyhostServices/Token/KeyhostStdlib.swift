#if canImport(Glibc)
import Glibc
#endif

/// Finds the Lua modules shipped in stdlib/ wherever keyhost runs from.
public enum KeyhostStdlib {
    public static let directory: String? = locate()

    private static func locate() -> String? {
        var candidates: [String] = []
        if let override = getenv(EnvironmentNames.stdlib) { candidates.append(String(cString: override)) }
        if let executable = executablePath() {
            var dir = parent(executable)
            // Installed: PREFIX/bin/keyhost with PREFIX/share/keyhost/stdlib.
            candidates.append(parent(dir) + "/share/keyhost/stdlib")
            // From a checkout: .build/<config>/keyhost, stdlib at the repository root.
            for _ in 0..<5 {
                candidates.append(dir + "/stdlib")
                dir = parent(dir)
            }
        }
        // The sources this binary was built from, when it was copied elsewhere (this file is Sources/KeyhostServices/Token/…).
        candidates.append(parent(parent(parent(parent(#filePath)))) + "/stdlib")
        return candidates.first { access($0 + "/keyhost/inspect.lua", F_OK) == 0 }
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        buffer[n] = 0
        return String(cString: buffer)
    }
}
