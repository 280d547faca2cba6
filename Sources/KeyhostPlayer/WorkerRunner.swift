import CKeyhostProcess
import KeyhostTokens

#if canImport(Glibc)
import Glibc
#endif

/// The wallet side: runs each request in a fresh worker process (keyhost itself in worker mode)
/// and kills it at the wall-clock deadline. A crash, a hang or a limit in the worker comes back
/// as a failed outcome; the wallet process is never at risk from the program.
public struct WorkerRunner {
    /// The keyhost executable to start (`/proc/self/exe` from the CLI).
    public var executable: String
    /// Time for the worker to start and answer, on top of the run's own limit.
    public var grace: Double = 2

    public init(executable: String) {
        self.executable = executable
    }

    /// The running keyhost binary.
    public static var currentExecutable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "keyhost" }
        buffer[n] = 0
        return String(cString: buffer)
    }

    public func run(_ request: RunRequest) -> RunOutcome {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard khp_pipe_cloexec(&toChild) == 0 else { return crashed("cannot create a pipe: \(String(cString: strerror(errno)))") }
        guard khp_pipe_cloexec(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            return crashed("cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = [executable, "token", "_worker"]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var env: [UnsafeMutablePointer<CChar>?] = [nil] // no environment: nothing secret to find there
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, &cArgs, &env)
        close(toChild[0]); close(fromChild[1])
        guard status == 0 else {
            close(toChild[1]); close(fromChild[0])
            return crashed("cannot start the worker \(executable): \(String(cString: strerror(status)))")
        }
        defer { close(fromChild[0]) }
        // SIGPIPE would end the wallet if the worker died before reading; the write reports EPIPE instead.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let written: Bool
        do { try WorkerFraming.write(request.encoded, to: toChild[1]); written = true } catch { written = false }
        close(toChild[1])
        let deadline = WorkerFraming.monotonicSeconds() + Double(request.limits.timeMillis) / 1000 + grace
        let answer: Result<[UInt8]?, Error>
        if written {
            answer = Result { try WorkerFraming.read(from: fromChild[0], limit: TokenLimits.maxEffectsBytes + (64 << 10), deadline: deadline) }
        } else {
            answer = .success(nil)
        }
        if case .failure(let error) = answer, error is WorkerFraming.Timeout {
            kill(pid, SIGKILL)
            _ = reap(pid)
            return .failed(kind: "time_limit", message: "the worker was stopped at the wall-clock deadline (\(request.limits.timeMillis) ms)")
        }
        let exit = reap(pid)
        switch answer {
        case .success(let bytes?):
            guard let outcome = try? RunOutcome(encoded: bytes) else { return crashed("the worker's answer is malformed") }
            return outcome
        case .success(nil):
            return crashed("the worker ended without an answer (\(exit))")
        case .failure(let error):
            return crashed("\(error) (\(exit))")
        }
    }

    private func crashed(_ message: String) -> RunOutcome { .failed(kind: "crashed", message: message) }

    /// Waits for the worker and says how it ended.
    private func reap(_ pid: pid_t) -> String {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return "status unknown" }
        }
        let signal = status & 0x7F
        if signal == 0 { return "exit status \((status >> 8) & 0xFF)" }
        let name = [SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGXCPU: "SIGXCPU", SIGBUS: "SIGBUS", SIGILL: "SIGILL"][signal]
        return "killed by signal \(signal)\(name.map { " (\($0))" } ?? "")"
    }
}
