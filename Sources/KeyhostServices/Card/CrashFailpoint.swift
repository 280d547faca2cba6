import CKeyhostProcess
import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

/// A crash for the test of crash output, in debug builds only: with `KEYHOST_FAILPOINT=NAME` keyhost traps
/// where NAME is hit, with the secret in memory and a register pointing at it, as a bug there would.
/// The test then checks that standard error holds none of it. Release builds compile `trap` to nothing.
public enum CrashFailpoint {
    /// Traps when `KEYHOST_FAILPOINT` names `name` (debug builds), holding `secret`.
    @inline(__always)
    public static func trap(_ name: String, holding secret: SecretBytes) {
        #if DEBUG
        guard let armed = getenv(CardFrontEnd.Environment.failpoint), String(cString: armed) == name else { return }
        secret.withUnsafeBytes { khp_failpoint_trap($0.baseAddress) }
        #endif
    }
}
