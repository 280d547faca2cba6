#if canImport(Glibc)
import Glibc
#endif

/// Which keyhost executable runs token programs (`keyhost token _worker`) for a process that is
/// not keyhost itself: keyhost-ledger re-runs programs to verify deposits with the same player,
/// stdlib and sandbox as the wallets that made them.
public enum WorkerProgram {
    /// Set by keyhost for the keyhost-ledger it starts: the keyhost to run programs with.
    public static let environmentName = "KEYHOST_WORKER"
    public static let name = "keyhost"

    /// `KEYHOST_WORKER`, else `keyhost` next to the running executable, else on PATH.
    public static func path() throws -> String {
        if let given = getenv(environmentName).map({ String(cString: $0) }), !given.isEmpty {
            guard access(given, X_OK) == 0 else {
                throw Missing(description: "\(environmentName)=\(given) is not an executable keyhost; unset it or point it to keyhost")
            }
            return given
        }
        let directory = runningDirectory()
        if let directory, access(directory + "/" + name, X_OK) == 0 { return directory + "/" + name }
        let search = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in search.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw Missing(description: """
            keyhost is not next to this program (\(directory ?? "?")) nor on PATH: the ledger re-runs each deposited \
            token's program in keyhost's worker to check that the program made every transfer. Install both with \
            scripts/install PREFIX, or set \(environmentName) to keyhost's path
            """)
    }

    /// The running keyhost binary (`/proc/self/exe`).
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return name }
        buffer[n] = 0
        return String(cString: buffer)
    }

    static func runningDirectory() -> String? {
        let path = current
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }
}
