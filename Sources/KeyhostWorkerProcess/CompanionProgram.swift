#if canImport(Glibc)
import Glibc
#endif

/// Finding a program installed with keyhost (keyhost itself, keyhost-ledger): next to the running
/// executable first (an install, a build folder), then on PATH.
public enum CompanionProgram {
    /// The running executable (`/proc/self/exe`), or nil where it cannot be read.
    public static var runningExecutable: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        buffer[n] = 0
        return String(cString: buffer)
    }

    /// The folder of the running executable.
    public static var runningDirectory: String? {
        guard let path = runningExecutable, let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `name` next to the running executable, else the first on PATH; nil when neither exists.
    public static func find(_ name: String) -> String? {
        if let directory = runningDirectory, access(directory + "/" + name, X_OK) == 0 { return directory + "/" + name }
        let search = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in search.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
