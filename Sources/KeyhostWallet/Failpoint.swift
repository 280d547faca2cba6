#if canImport(Glibc)
import Glibc
#endif

/// Crash points for the exactly-once tests, in debug builds only: with `KEYHOST_FAILPOINT=name`
/// the process kills itself with SIGKILL when a run reaches that point, as a power cut or
/// `kill -9` would, so the tests can check the wallet at every step of a run. Release builds
/// compile `hit` to nothing.
enum Failpoint {
    #if DEBUG
    static let armed: String? = getenv("KEYHOST_FAILPOINT").map { String(cString: $0) }
    #endif

    /// The named points, in the order a run passes them.
    static let names = ["before_pending", "after_pending", "after_program", "after_sign", "in_commit", "after_commit"]

    @inline(__always)
    static func hit(_ name: String) {
        #if DEBUG
        if let armed, armed == name { kill(getpid(), SIGKILL) }
        #endif
    }
}
