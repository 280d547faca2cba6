import CKeyhostProcess
import KeyhostTokens

#if canImport(Glibc)
import Glibc
#endif

/// The wallet side: runs each request in a worker process (keyhost itself in worker mode) and
/// kills it at the wall-clock deadline. A crash, a hang or a limit in the worker comes back as a
/// failed outcome; the wallet process is never at risk from the program.
///
/// By default every run gets a fresh process. `runsPerWorker` above 1 keeps a worker warm for
/// that many runs (each in a fresh Lua state), which saves the process start (milliseconds for a
/// dynamically linked binary) at the price of runs sharing an address space: a worker is retired
/// after any run that did not complete, and after any bytecode program (Lua does not verify
/// bytecode), so only source programs that ended cleanly are followed by another.
///
/// `forking` (what a wallet's one-at-a-time runs use): one worker process, started once, is a fork
/// server (`token _worker --fork`) that never runs a program itself; every run is a child forked
/// from it, which runs that one program in a fresh Lua state under its own kernel limits and
/// exits. A run costs a fork instead of an exec (no dynamic loading, no runtime start), and no
/// run shares a process with another. The fork server is replaced after `runsPerWorker` runs (so
/// the children's address layout is re-randomised) and whenever it fails to answer.
///
/// One thread at a time (`WorkerPool` hands each runner to one caller).
public final class WorkerRunner: @unchecked Sendable {
    /// The keyhost executable to start (`/proc/self/exe` from the CLI).
    public let executable: String
    /// Time for the worker to start and answer, on top of the run's own limit.
    public var grace: Double = 2
    /// Runs one worker process serves before it is replaced (1: a fresh process per run).
    public let runsPerWorker: Int
    /// What follows the executable on the worker's command line.
    public let arguments: [String]
    /// Every run is a child forked from a fork server (see above).
    public let forking: Bool

    private var worker: Worker?
    /// Read by a pool's health check from other threads.
    let progress = WorkerProgress()
    /// What the first worker, forked from this process, runs instead of exec'ing `executable` (see
    /// `batchLanes`). Used once: by the time a replacement is needed the process may hold a secret.
    private var forkedServe: (() -> Int32)? = nil

    public init(executable: String, arguments: [String] = ["token", "_worker"], runsPerWorker: Int = 1) {
        self.executable = executable
        self.arguments = arguments
        self.runsPerWorker = max(1, runsPerWorker)
        forking = false
    }

    /// A runner whose runs are forked, one child each, from a fork server serving `runsPerServer` runs.
    public init(forkingFrom executable: String, arguments: [String] = ["token", "_worker"], runsPerServer: Int = 1000) {
        self.executable = executable
        self.arguments = arguments
        runsPerWorker = max(1, runsPerServer)
        forking = true
    }

    /// Forked runs from the running binary: what a long wallet session (a Lua wallet object) uses.
    public static func forkingCurrent() -> WorkerRunner { WorkerRunner(forkingFrom: currentExecutable) }

    /// The lanes for a batch of `count` runs: one warm worker per CPU (at most four), each serving up
    /// to 1000 runs and replaced after any failed or bytecode run. Started now; the caller stops them
    /// when its batches are done.
    ///
    /// With `serve` (the command line, which calls this first thing, single-threaded, before it has
    /// read a secret or opened a file), each first worker is a fork of this process that runs `serve`
    /// rather than an exec of keyhost: it skips the dynamic loading and runtime start of a new process
    /// (most of a worker's cost in a short batch). The child keeps descriptors 0-2 only, default
    /// signals and no environment (`khp_become_worker_child`), as an exec'd worker would. Replacements
    /// (by then the process has read the holder's key), and any lane of a process that already has
    /// other threads, are exec'd as usual.
    public static func batchLanes(for count: Int, forkingTo serve: (() -> Int32)? = nil) -> [WorkerRunner] {
        (0..<BatchLanes.count(for: count)).map { _ in batchLane(forkingTo: serve) }
    }

    /// One lane of a batch (see `batchLanes`), started.
    public static func batchLane(forkingTo serve: (() -> Int32)? = nil) -> WorkerRunner {
        let lane = WorkerRunner(executable: currentExecutable, runsPerWorker: 1000)
        lane.forkedServe = serve
        lane.start()
        return lane
    }

    /// The fork server's or warm worker's process id while one is running.
    public var processID: pid_t? { worker?.pid }

    /// Ends the fork server or warm worker now, rather than when the runner goes.
    public func stop() {
        worker?.retire()
        worker = nil
    }

    /// Ends every runner's worker: all are told at once (their input closed), then waited for, so
    /// their exits overlap instead of following one another.
    public static func stop(_ runners: [WorkerRunner]) {
        for runner in runners { runner.worker?.closePipes() }
        for runner in runners { runner.stop() }
    }

    deinit { worker?.retire() }

    /// The running keyhost binary.
    public static var currentExecutable: String { WorkerProgram.current }

    /// Starts the worker (fresh, warm or fork server) now, so that it gets ready while the caller
    /// does its own work (opening the wallet, the checks, the claim) instead of when the first run needs it.
    public func start() {
        guard worker == nil else { return }
        if case .success(let w) = startWorker() {
            worker = w
            startedEarly = true
        }
    }

    /// A new worker: the first one forked when this runner has a body to fork to and the process is
    /// still single-threaded (a child of a multi-threaded process may find a lock held forever); any
    /// other exec'd.
    private func startWorker() -> Result<Worker, Worker.StartError> {
        let serve = forkedServe
        forkedServe = nil
        if let serve, khp_thread_count() == 1, case .success(let w) = Worker.fork(serve: serve) { return .success(w) }
        let arguments = arguments + mode
        return SpawningThread.run { Worker.start(executable: executable, arguments: arguments) }
    }

    private var mode: [String] { forking ? ["--fork"] : runsPerWorker > 1 ? ["--serve"] : [] }
    /// The worker was started by `start()` and has served nothing yet: it counts as new for the first run.
    private var startedEarly = false

    /// The worker to talk to, started now if there is none; `started` when it has served nothing yet
    /// (its failure is then not a worker that died between runs, and gets no second try).
    private func readyWorker() -> Result<(Worker, started: Bool), Worker.StartError> {
        let early = startedEarly
        startedEarly = false
        if let worker { return .success((worker, early)) }
        switch startWorker() {
        case .success(let started):
            worker = started
            return .success((started, true))
        case .failure(let error):
            return .failure(error)
        }
    }

    public func run(_ request: RunRequest) -> RunOutcome {
        progress.note()
        // SIGPIPE would end the wallet if the worker died before reading; writes report EPIPE instead.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let current: Worker, started: Bool
        switch readyWorker() {
        case .success(let ready): (current, started) = ready
        case .failure(let error): return .failed(kind: "crashed", message: error.description)
        }
        let (outcome, answered) = current.exchange(request, grace: grace)
        current.runs += 1
        if forking {
            // The child that ran the program is gone either way; the server stays unless it failed to answer.
            if !answered || current.runs >= runsPerWorker {
                current.retire()
                worker = nil
                // A server that died between runs (killed from outside, say) gets one fresh try. Programs
                // run in the server's children, so no program can end the server; and a run that never
                // answered committed nothing, so running it again is safe.
                if !answered, !started, case .failed("crashed", _) = outcome { return run(request) }
            }
            return outcome
        }
        if settle(current, after: outcome, started: started, ranBytecode: request.token.token.program.kind == .luaBytecode) {
            return run(request)
        }
        return outcome
    }

    /// After an exchange with a warm worker whose last answer was `last`: retires the worker when that
    /// run failed, when it has served its runs, or when it ran bytecode. True when it had died between
    /// runs, before it took the request (killed from outside, say): the caller gets one fresh try.
    private func settle(_ current: Worker, after last: RunOutcome, started: Bool, ranBytecode: Bool = false) -> Bool {
        var retire = current.runs >= runsPerWorker || ranBytecode
        var diedBetweenRuns = false
        if case .failed(let kind, _) = last {
            retire = true
            diedBetweenRuns = kind == "crashed" && !started && current.answered == current.runs - 1 && current.silentDeath
        }
        if retire {
            current.retire()
            worker = nil
        }
        return diedBetweenRuns
    }

    /// The runs that check several links of one chain (`TransferRuns`), in one exchange with a warm
    /// worker: the chain goes once and the answers come back to back, with no round trip per link.
    /// Outcomes in order, up to and including the first that refuses its link. A bytecode program,
    /// a fork server or a single link is run one request at a time, as `run` does.
    public func runLinks(_ request: LinkRunsRequest) -> [RunOutcome] {
        guard !forking, runsPerWorker > 1, request.links.count > 1, request.chain.token.token.program.kind == .luaSource else {
            return request.runEach(run)
        }
        progress.note()
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let current: Worker, started: Bool
        switch readyWorker() {
        case .success(let ready): (current, started) = ready
        case .failure(let error): return [.failed(kind: "crashed", message: error.description)]
        }
        let outcomes = current.exchangeLinks(request, grace: grace, progress: progress)
        current.runs += outcomes.count
        if let last = outcomes.last, settle(current, after: last, started: started), outcomes.count == 1 {
            return runLinks(request)
        }
        return outcomes
    }

    /// One worker process and its pipes.
    final class Worker {
        let pid: pid_t
        let input: Int32
        let output: Int32
        var runs = 0
        var answered = 0
        /// The last exchange found the worker gone before it read anything.
        var silentDeath = false
        private var exitText: String?

        private init(pid: pid_t, input: Int32, output: Int32) {
            self.pid = pid
            self.input = input
            self.output = output
            // Requests are written against the run's deadline (`WorkerFraming.write(_:to:deadline:)`).
            _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
        }

        struct StartError: Error, CustomStringConvertible { let description: String }

        /// A worker forked from this (single-threaded) process, running `serve` and exiting with its status.
        static func fork(serve: () -> Int32) -> Result<Worker, StartError> {
            let pipes: WorkerPipes
            switch WorkerPipes.make() {
            case .success(let made): pipes = made
            case .failure(let failure): return .failure(StartError(description: "cannot create a pipe: \(failure.reason)"))
            }
            let parent = getpid()
            let pid = khp_fork()
            if pid == 0 {
                guard khp_become_worker_child(pipes.childInput, pipes.childOutput, parent) == 0 else { _exit(5) }
                // _exit: the parent's buffered output and exit handlers are not the worker's to run.
                _exit(serve())
            }
            if let reason = pipes.parentAfterFork(pid) { return .failure(StartError(description: "cannot fork a worker: \(reason)")) }
            return .success(Worker(pid: pid, input: pipes.requests, output: pipes.answers))
        }

        static func start(executable: String, arguments: [String]) -> Result<Worker, StartError> {
            let pipes: WorkerPipes
            switch WorkerPipes.make() {
            case .success(let made): pipes = made
            case .failure(let failure): return .failure(StartError(description: "cannot create a pipe: \(failure.reason)"))
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, pipes.childInput, 0)
            posix_spawn_file_actions_adddup2(&actions, pipes.childOutput, 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let closing = khp_spawn_close_other_descriptors(&actions)
            guard closing == 0 else {
                pipes.closeChildEnds(); pipes.closeParentEnds()
                return .failure(StartError(description: "cannot prepare the worker's descriptors: \(String(cString: strerror(closing)))"))
            }
            let argv = [executable] + arguments
            var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { for p in cArgs { free(p) } }
            var env: [UnsafeMutablePointer<CChar>?] = [nil] // no environment: nothing secret to find there
            // No signal blocked: a mask survives exec, and the threads that start workers may block
            // most signals (Dispatch's do), SIGXCPU among them, which would void the run's CPU limit.
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            var pid: pid_t = 0
            var status = posix_spawn(&pid, executable, &actions, &attributes, &cArgs, &env)
            // ETXTBSY: another thread's child briefly holds the executable open for writing
            // (a binary just installed, say); it passes within milliseconds.
            for _ in 0..<20 where status == ETXTBSY {
                usleep(5000)
                status = posix_spawn(&pid, executable, &actions, &attributes, &cArgs, &env)
            }
            pipes.closeChildEnds()
            guard status == 0 else {
                pipes.closeParentEnds()
                return .failure(StartError(description: "cannot start the worker \(executable): \(String(cString: strerror(status)))"))
            }
            return .success(Worker(pid: pid, input: pipes.requests, output: pipes.answers))
        }

        /// The outcome, and whether the worker answered it (false: it timed out, died or garbled).
        func exchange(_ request: RunRequest, grace: Double) -> (RunOutcome, Bool) {
            let outcome = talk(request, grace: grace)
            return (outcome, answeredLast)
        }

        private var answeredLast = false

        /// `request`'s outcomes as the worker sends them, each within its run's deadline; a run that
        /// gets no answer ends the list with a failed outcome (the worker is then retired).
        func exchangeLinks(_ request: LinkRunsRequest, grace: Double, progress: WorkerProgress) -> [RunOutcome] {
            let written: Bool
            switch send(request.encoded, timeMillis: request.limits.timeMillis, grace: grace) {
            case .stopped(let outcome): return [outcome]
            case .written(let sent): written = sent
            }
            var outcomes: [RunOutcome] = []
            for _ in request.links {
                let outcome = answer(timeMillis: request.limits.timeMillis, grace: grace, written: written || !outcomes.isEmpty)
                outcomes.append(outcome)
                progress.note()
                if LinkRunsRequest.isLast(outcome) { break }
            }
            return outcomes
        }

        private func talk(_ request: RunRequest, grace: Double) -> RunOutcome {
            switch send(request.encoded, timeMillis: request.limits.timeMillis, grace: grace) {
            case .stopped(let outcome): return outcome
            case .written(let written): return answer(timeMillis: request.limits.timeMillis, grace: grace, written: written)
            }
        }

        /// What became of a request: written or not (a worker that already ended fails the write, and what it
        /// may have said is still read), or the outcome of a worker that stopped reading and was killed.
        private enum Sent { case written(Bool), stopped(RunOutcome) }

        /// Writes a request by the run's deadline.
        private func send(_ bytes: [UInt8], timeMillis: UInt64, grace: Double) -> Sent {
            let deadline = WorkerFraming.monotonicSeconds() + Double(timeMillis) / 1000 + grace
            do {
                try WorkerFraming.write(bytes, to: input, deadline: deadline)
                return .written(true)
            } catch is WorkerFraming.Timeout {
                answeredLast = false
                _ = end()
                return .stopped(.failed(kind: "time_limit", message: "the worker did not take its request by the wall-clock deadline (\(timeMillis) ms) and was stopped"))
            } catch {
                return .written(false)
            }
        }

        /// Reads the answer to one run, killing the worker at the run's wall-clock deadline. A worker that
        /// has not given a whole, well-formed answer is never waited for: it may be blocked writing to a
        /// pipe nobody reads any more, so it is killed first and then reaped.
        private func answer(timeMillis: UInt64, grace: Double, written: Bool) -> RunOutcome {
            answeredLast = false
            let deadline = WorkerFraming.monotonicSeconds() + Double(timeMillis) / 1000 + grace
            let bytes: [UInt8]?
            do {
                bytes = try WorkerFraming.read(from: output, limit: RunOutcome.maxEncodedBytes, deadline: deadline)
            } catch is WorkerFraming.Timeout {
                _ = end()
                return .failed(kind: "time_limit", message: "the worker was stopped at the wall-clock deadline (\(timeMillis) ms)")
            } catch {
                return .failed(kind: "crashed", message: "\(error) (the worker was stopped: \(end()))")
            }
            guard let bytes else {
                silentDeath = !written
                let when = written ? "without an answer" : "before it took the request"
                return .failed(kind: "crashed", message: "the worker ended \(when) (\(reapClosed()))")
            }
            answered += 1
            guard let outcome = try? RunOutcome(encoded: bytes) else {
                _ = end()
                return .failed(kind: "crashed", message: "the worker's answer is malformed")
            }
            answeredLast = true
            return outcome
        }

        /// Kills the worker and says how it ended (a worker that had already ended keeps its own cause).
        private func end() -> String {
            if exitText == nil { kill(pid, SIGKILL) }
            return reap()
        }

        /// After its output ended: the worker is exiting, or it closed its output and lives on (which no
        /// keyhost worker does); waits briefly, then kills it, so a worker is never waited for unbounded.
        private func reapClosed() -> String {
            if exitText == nil, !exitsSoon() { kill(pid, SIGKILL) }
            return reap()
        }

        /// True when the worker exits within 100 ms (it is then reaped, its status kept).
        private func exitsSoon() -> Bool {
            // A worker at end of input exits within a millisecond or two: short waits first.
            var status: Int32 = 0
            var waited: UInt32 = 0, step: UInt32 = 50
            while waited < 100_000 {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid { exitText = ProcessExit.text(status: status); return true }
                if r < 0 && errno != EINTR { exitText = "status unknown"; return true }
                usleep(step)
                waited += step
                step = min(step * 2, 5000)
            }
            return false
        }

        /// Closes the pipes (a serving worker ends at end of input), then waits for it; a worker that
        /// does not end promptly is killed.
        func retire() {
            closePipes()
            awaitExit()
        }

        /// The worker's end of input: a serving worker exits when it reads it.
        func closePipes() {
            guard !pipesClosed else { return }
            pipesClosed = true
            close(input)
            close(output)
        }

        private var pipesClosed = false

        /// After `closePipes`: waits for the worker to exit, and kills one that does not promptly.
        func awaitExit() {
            _ = reapClosed()
        }

        /// Waits for the worker and says how it ended.
        func reap() -> String {
            if let exitText { return exitText }
            let text = ProcessExit.wait(pid).text
            exitText = text
            return text
        }
    }
}
