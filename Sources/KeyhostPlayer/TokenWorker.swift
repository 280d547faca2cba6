import CKeyhostProcess
import KeyhostTokens
import KeyhostWorkerProcess
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The worker side: `keyhost token _worker` reads one run request on standard input, puts
/// kernel limits on itself, runs the program and writes the outcome on standard output. It has
/// no store, no keys and no environment, so whatever a program does to it ends with it.
public enum TokenWorker {
    /// Serves one request, or with `serving` every request until its input ends; returns the
    /// process exit status.
    public static func serve(player: TokenPlayer, serving: Bool = false) -> Int32 {
        lockDown()
        guard khp_enter_run_sandbox() == 0 else { return answer(sandboxFailure()) }
        repeat {
            let runs: [RunRequest]
            do {
                guard let bytes = try WorkerFraming.read(from: 0, limit: RunRequest.maxEncodedBytes) else { return serving ? 0 : 2 }
                let value = try RunRequest.decodeWorkerRequest(bytes)
                if LinkRunsRequest.isLinkRuns(value) {
                    // A verifier's runs for several links of one source program: one answer per run, in
                    // order, ending at the first that refuses its link (`LinkRunsRequest.isLast`).
                    let request = try LinkRunsRequest(cbor: value)
                    guard request.chain.token.token.program.kind == .luaSource else {
                        return answer(.failed(kind: "setup", message: "a bytecode program's runs are asked for one at a time"))
                    }
                    runs = request.links.map(request.run(for:))
                } else {
                    runs = [try RunRequest(cbor: value)]
                }
            } catch {
                return answer(.failed(kind: "setup", message: "the worker could not read its request: \(error)"))
            }
            for request in runs {
                limitSelf(request.limits)
                let outcome = player.run(request)
                let status = answer(outcome)
                if status != 0 { return status }
                if runs.count > 1, LinkRunsRequest.isLast(outcome) { break }
            }
        } while serving
        return 0
    }

    /// The fork server (`keyhost token _worker --fork`): a template process that never runs a
    /// program itself. Each run is a child forked from it, which takes exactly one request, puts
    /// its limits on itself, runs that one program in a fresh Lua state and exits; the template
    /// passes on the child's answer, or says how the child ended. The next child is forked, and
    /// gets ready, while the wallet is still committing the last run, so a run waits for neither
    /// an exec nor a fork. Returns the exit status.
    public static func serveForking(player: TokenPlayer) -> Int32 {
        lockDown()
        // The server forks, so it cannot take the run filter itself (its children do, after the fork).
        _ = khp_no_new_privileges()
        // A child of a multi-threaded process may find a lock held by a thread that no longer exists.
        guard khp_thread_count() == 1 else {
            _ = answer(.failed(kind: "setup", message: "the worker's fork server has \(khp_thread_count()) threads; it forks only when single-threaded"))
            return 4
        }
        // What every run needs is loaded here once (the lazily opened libraries), so no child loads anything.
        player.prepare()
        let template = getpid()
        // Children that answered and are exiting: reaped when done, never waited for on a run's path.
        var exiting: [pid_t] = []
        defer { for pid in exiting { _ = ProcessExit.wait(pid) } }
        var next = Child.fork(template: template, player: player)
        while true {
            let child: Child
            switch next {
            case .success(let ready): child = ready
            case .failure(let failure):
                // Without a child nothing can run: answer the next request with why, then end.
                if (try? WorkerFraming.read(from: 0, limit: RunRequest.maxEncodedBytes)) ?? nil == nil { return 0 }
                _ = answer(.failed(kind: "crashed", message: failure.message))
                return 3
            }
            let request: [UInt8]
            do {
                guard let bytes = try WorkerFraming.read(from: 0, limit: RunRequest.maxEncodedBytes) else {
                    child.dismiss()
                    return 0
                }
                request = bytes
            } catch {
                child.dismiss()
                return answer(.failed(kind: "setup", message: "the worker could not read its request: \(error)"))
            }
            let sent = (try? WorkerFraming.write(request, to: child.requests)) != nil
            close(child.requests)
            // The next run's child is forked and gets ready while this one runs (on another core).
            next = Child.fork(template: template, player: player)
            let reply: Result<[UInt8]?, Error> = sent ? Result { try WorkerFraming.read(from: child.answers, limit: RunOutcome.maxEncodedBytes) } : .success(nil)
            close(child.answers)
            let status: Int32
            switch reply {
            case .success(let bytes?):
                status = relay(bytes)
                exiting.append(child.pid)
            case .success(nil):
                status = answer(.failed(kind: "crashed", message: "the run's process ended without an answer (\(ProcessExit.wait(child.pid).text))"))
            case .failure(let error):
                // A child whose answer broke off or is over the limit may still be writing: it is stopped, never waited for.
                kill(child.pid, SIGKILL)
                status = answer(.failed(kind: "crashed", message: "the run's process gave no usable answer: \(error) (\(ProcessExit.wait(child.pid).text))"))
            }
            exiting.removeAll { pid in
                var code: Int32 = 0
                return waitpid(pid, &code, WNOHANG) == pid
            }
            if status != 0 {
                if case .success(let unused) = next { unused.dismiss() }
                return status
            }
        }
    }

    private struct ForkFailure: Error { let message: String }

    /// A forked child waiting for its one request.
    private struct Child {
        let pid: pid_t
        /// The template's ends: the request goes in, the answer comes out.
        let requests: Int32
        let answers: Int32

        static func fork(template: pid_t, player: TokenPlayer) -> Result<Child, ForkFailure> {
            let pipes: WorkerPipes
            switch WorkerPipes.make() {
            case .success(let made): pipes = made
            case .failure(let failure): return .failure(ForkFailure(message: "the worker cannot create a pipe: \(failure.reason)"))
            }
            let pid = khp_fork()
            if pid == 0 {
                pipes.closeParentEnds()
                _ = khp_die_with_parent_pid(template)
                _exit(runOne(player: player, requestFrom: pipes.childInput, answerTo: pipes.childOutput))
            }
            if let reason = pipes.parentAfterFork(pid) { return .failure(ForkFailure(message: "the worker cannot fork: \(reason)")) }
            return .success(Child(pid: pid, requests: pipes.requests, answers: pipes.answers))
        }

        /// No request will come: the child ends at end of input.
        func dismiss() {
            close(requests)
            close(answers)
            _ = ProcessExit.wait(pid)
        }
    }

    /// In a forked child: get ready, then take one request, limit, run and answer it.
    private static func runOne(player: TokenPlayer, requestFrom input: Int32, answerTo output: Int32) -> Int32 {
        // The wallet's pipes are the template's, and so are the pipes of the child running now (open in the
        // template at this fork): this child keeps only its own request and answer pipes, as 0 and 1.
        guard khp_keep_only_descriptors(input, output) == 0 else { return 3 }
        let fd: Int32 = 1
        let size = addressSpaceInUse()
        player.prepareChild()
        guard khp_enter_run_sandbox() == 0 else {
            do { try WorkerFraming.write(sandboxFailure().encoded, to: fd) } catch { return 3 }
            return 0
        }
        let outcome: RunOutcome
        do {
            guard let bytes = try WorkerFraming.read(from: 0, limit: RunRequest.maxEncodedBytes) else { return 0 }
            let request = try RunRequest(encoded: bytes)
            limitSelf(request.limits, addressSpaceInUse: size, cpuUsed: 0)
            outcome = player.run(request)
        } catch {
            outcome = .failed(kind: "setup", message: "the worker could not read its request: \(error)")
        }
        do { try WorkerFraming.write(outcome.encoded, to: fd) } catch { return 3 }
        return 0
    }

    /// What every worker does first: die with the wallet (a run nobody waits for must not go on),
    /// and no core dumps or file writes, whatever a program manages to do to it.
    private static func lockDown() {
        _ = khp_die_with_parent()
        set(RLIMIT_CORE, 0)
        set(RLIMIT_FSIZE, 0)
    }

    /// A worker that cannot put the kernel's limits on itself runs nothing (a verifier's own failure, not the program's).
    private static func sandboxFailure() -> RunOutcome {
        .failed(kind: "setup", message: "the worker cannot enter its sandbox (no_new_privs, seccomp): \(String(cString: strerror(errno)))")
    }

    /// Writes an encoded outcome to the wallet; the exit status if that fails.
    private static func relay(_ bytes: [UInt8]) -> Int32 {
        do { try WorkerFraming.write(bytes, to: 1) } catch { return 3 }
        return 0
    }

    private static func answer(_ outcome: RunOutcome) -> Int32 { relay(outcome.encoded) }

    /// Kernel-enforced limits under the Lua ones, set before each run: address space (what the
    /// process has now plus twice the run's memory, the state's object arena and slack for the runtime) and CPU seconds
    /// (counted from what the process has used so far, since RLIMIT_CPU counts the whole process).
    /// Only soft limits move, so a warm worker can set them again for its next run.
    static func limitSelf(_ limits: RunLimits) {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        limitSelf(limits, addressSpaceInUse: addressSpaceInUse(), cpuUsed: UInt64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec))
    }

    static func limitSelf(_ limits: RunLimits, addressSpaceInUse current: UInt64, cpuUsed: UInt64) {
        if current > 0 {
            let arena = UInt64(SandboxLimits.addressSpaceReserved(memoryBytes: Int(clamping: limits.memoryBytes)))
            set(RLIMIT_AS, current + limits.memoryBytes * 2 + arena + (256 << 20), soft: true)
        }
        set(RLIMIT_CPU, cpuUsed + (limits.timeMillis + 999) / 1000 + 1, soft: true)
    }

    /// The process's address space in bytes (/proc/self/statm), 0 when it cannot be read.
    static func addressSpaceInUse() -> UInt64 {
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        var current: UInt64 = 0
        if let statm = fopen("/proc/self/statm", "r") {
            var size: UInt = 0
            if withUnsafeMutablePointer(to: &size, { fscanfSize(statm, $0) }) { current = UInt64(size) * page }
            fclose(statm)
        }
        return current
    }

    private static func fscanfSize(_ file: UnsafeMutablePointer<FILE>, _ out: UnsafeMutablePointer<UInt>) -> Bool {
        var line = [CChar](repeating: 0, count: 128)
        guard fgets(&line, Int32(line.count), file) != nil else { return false }
        let text = String(cString: line)
        guard let first = text.split(separator: " ").first, let pages = UInt(first) else { return false }
        out.pointee = pages
        return true
    }

    private static func set(_ resource: __rlimit_resource, _ value: UInt64, soft: Bool = false) {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(resource.rawValue), &limit)
        limit.rlim_cur = rlim_t(value)
        if !soft || limit.rlim_max < limit.rlim_cur { limit.rlim_max = rlim_t(value) }
        _ = setrlimit(__rlimit_resource_t(resource.rawValue), &limit)
    }
}
