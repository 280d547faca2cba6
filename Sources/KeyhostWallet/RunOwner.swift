#if canImport(Glibc)
import Glibc
#endif
import KeyhostFiles

/// The process that holds a PENDING token: enough to tell, from another process, whether it still runs.
///
/// A pid alone is not enough. A live run in another process must never be reset to HELD (that
/// would let the token run twice), while a run whose process died must be reset (or the token is
/// stuck forever). Pids are recycled, so the owner is the pid *and* its start time (field 22 of
/// `/proc/<pid>/stat`, clock ticks since boot), and start times restart at every boot, so the boot
/// id is part of it too. A recycled pid, a reboot, or a zombie all count as dead.
///
/// This assumes every process opening a wallet sees the same `/proc` (one pid namespace); a wallet
/// shared between containers with separate pid namespaces would see each other's runs as dead.
public struct RunOwner: Equatable, Sendable {
    /// The owner's process id.
    public let pid: Int32
    /// The owner's start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    public let startTime: UInt64
    /// `/proc/sys/kernel/random/boot_id` when the owner was recorded.
    public let bootID: String

    /// An owner as recorded (for tests and for reading rows back).
    public init(pid: Int32, startTime: UInt64, bootID: String) {
        self.pid = pid
        self.startTime = startTime
        self.bootID = bootID
    }

    /// This process.
    public static func current() -> RunOwner {
        let pid = getpid()
        return RunOwner(pid: pid, startTime: ProcFS.startTime(of: pid)?.startTime ?? 0, bootID: ProcFS.bootID ?? "")
    }

    /// The owner of process `pid` as it is now, or nil if there is no such process.
    public static func of(pid: Int32) -> RunOwner? {
        guard let stat = ProcFS.startTime(of: pid) else { return nil }
        return RunOwner(pid: pid, startTime: stat.startTime, bootID: ProcFS.bootID ?? "")
    }

    /// Whether this exact process still runs: same boot, same pid, same start time, not a zombie.
    public var isAlive: Bool {
        guard pid > 0 else { return false }
        guard let boot = ProcFS.bootID else {
            // No /proc (not Linux): err on the side of "alive". A stuck PENDING can be fixed by
            // hand; a live run wrongly reset lets a token run twice.
            return kill(pid, 0) == 0 || errno == EPERM
        }
        guard boot == bootID else { return false }
        guard let stat = ProcFS.startTime(of: pid) else { return false }
        return !stat.isZombie && stat.startTime == startTime
    }
}

/// The two `/proc` facts liveness needs, read without Foundation.
enum ProcFS {
    /// This boot's id; read once, as it cannot change while the process runs.
    static let bootID: String? = contents(of: "/proc/sys/kernel/random/boot_id").map {
        String(decoding: $0.filter { $0 != 0x0A }, as: UTF8.self)
    }

    /// Field 22 (start time) and whether field 3 says zombie/dead, from `/proc/<pid>/stat`.
    static func startTime(of pid: Int32) -> (startTime: UInt64, isZombie: Bool)? {
        guard pid > 0, let bytes = contents(of: "/proc/\(pid)/stat") else { return nil }
        // Field 2 is the command name in parentheses and may itself hold spaces and ')': the
        // fields after it start after the *last* ')'.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19, let start = UInt64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
        let state = fields[0].first ?? 0
        return (start, state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") || state == UInt8(ascii: "x"))
    }

    /// A whole small file (at most 64 KiB: a stat line or a boot id), or nil if it cannot be read.
    static func contents(of path: String) -> [UInt8]? {
        try? BoundedFile.read(path, limit: 64 << 10)
    }
}
