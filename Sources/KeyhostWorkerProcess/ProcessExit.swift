#if canImport(Glibc)
import Glibc
#endif

/// Waiting for a child process and saying how it ended, in the words run failures use.
public enum ProcessExit {
    /// Waits for `pid`: the signal that ended it (0 if it exited) and "exit status N" or
    /// "killed by signal N (NAME)".
    public static func wait(_ pid: pid_t) -> (signal: Int32, text: String) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return (0, "status unknown") }
        }
        return (status & 0x7F, text(status: status))
    }

    /// How a process whose `waitpid` status is `status` ended.
    public static func text(status: Int32) -> String {
        let signal = status & 0x7F
        if signal == 0 { return "exit status \((status >> 8) & 0xFF)" }
        let name = [SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGXCPU: "SIGXCPU", SIGBUS: "SIGBUS", SIGILL: "SIGILL"][signal]
        return "killed by signal \(signal)\(name.map { " (\($0))" } ?? "")"
    }
}
