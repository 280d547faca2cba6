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
        if let found = CompanionProgram.find(name) { return found }
        throw Missing(description: """
            keyhost is not next to this program (\(CompanionProgram.runningDirectory ?? "?")) nor on PATH: the ledger re-runs each \
            deposited token's program in keyhost's worker to check that the program made every transfer. Install both with \
            scripts/install PREFIX, or set \(environmentName) to keyhost's path
            """)
    }

    /// The running keyhost binary (`/proc/self/exe`).
    public static var current: String { CompanionProgram.runningExecutable ?? name }

    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }
}
