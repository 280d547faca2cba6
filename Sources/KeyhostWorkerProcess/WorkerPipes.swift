import CKeyhostProcess

#if canImport(Glibc)
import Glibc
#endif

/// The two close-on-exec pipes between a process and a worker it starts (fork or spawn): requests go
/// down one, answers come up the other.
public struct WorkerPipes {
    /// The worker's ends: what becomes its standard input, and its standard output.
    public let childInput: Int32, childOutput: Int32
    /// This process's ends: where requests are written, and answers read.
    public let requests: Int32, answers: Int32

    /// Why the pipes could not be made: the OS's text.
    public struct Failure: Error { public let reason: String }

    /// Both pipes, or why not (with nothing left open).
    public static func make() -> Result<WorkerPipes, Failure> {
        var down: [Int32] = [-1, -1], up: [Int32] = [-1, -1]
        guard khp_pipe_cloexec(&down) == 0 else { return .failure(Failure(reason: String(cString: strerror(errno)))) }
        guard khp_pipe_cloexec(&up) == 0 else {
            let reason = String(cString: strerror(errno))
            close(down[0]); close(down[1])
            return .failure(Failure(reason: reason))
        }
        return .success(WorkerPipes(childInput: down[0], childOutput: up[1], requests: down[1], answers: up[0]))
    }

    /// In the parent once the worker has its ends (or failed to start).
    public func closeChildEnds() { close(childInput); close(childOutput) }

    /// In the parent right after fork() returned `pid`: keeps only its own ends, and says why the fork
    /// failed (then nothing is left open), or nil.
    public func parentAfterFork(_ pid: pid_t) -> String? {
        let reason = pid < 0 ? String(cString: strerror(errno)) : nil
        closeChildEnds()
        if reason != nil { closeParentEnds() }
        return reason
    }

    /// In a forked worker, or in the parent when the worker failed to start.
    public func closeParentEnds() { close(requests); close(answers) }
}
