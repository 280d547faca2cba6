import Foundation
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import Testing
import KeyhostTestSupport
import KeyhostWorkerProcess

/// Token runs in a worker process: the real keyhost worker, and stand-ins that crash or hang.
@Suite struct WorkerRunnerTests {
    static let issuerKey = try! PrivateKey(bytes: Array(repeating: 0x31, count: 32))
    static let holderKey = try! PrivateKey(bytes: Array(repeating: 0x32, count: 32))
    static let limits = RunLimits(instructions: 10_000_000, memoryBytes: 16 << 20, timeMillis: 2_000)

    static func request(_ program: String, limits: RunLimits = limits) throws -> RunRequest {
        let token = Token(
            id: Array(repeating: 7, count: 32), issuer: issuerKey.publicKey.xOnly, value: 25, unit: "pt",
            program: TokenProgram(kind: .luaSource, code: Array(program.utf8)), holder: holderKey.publicKey
        )
        return RunRequest(token: try SignedToken.issue(token, issuerKey: issuerKey), arguments: .map([CBORPair(.text("n"), .unsigned(3))]),
                          now: 1_900_000_000, limits: limits, bytecodeAllowed: false)
    }

    @Test func theWorkerRunsTheProgramAndAnswers() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path)
        let outcome = runner.run(try Self.request("local t = ... t.emit{ v = t.token.value * t.args.n, json = t.json.encode{1} }"))
        #expect(outcome == .completed(effects: [.map([CBORPair(.text("v"), .unsigned(75)), CBORPair(.text("json"), .text("[1]"))].sorted {
            CBOREncoder.encode($0.key).lexicographicallyPrecedes(CBOREncoder.encode($1.key))
        })]))
        let failed = runner.run(try Self.request("error('refused: ' .. (...).args.n)"))
        guard case .failed("program", let message) = failed else { Issue.record("got \(failed)"); return }
        #expect(message.contains("refused: 3"))
    }

    @Test func aMemoryBombIsStoppedInsideTheWorker() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path)
        let outcome = runner.run(try Self.request("local t = {} for i = 1, 1e8 do t[i] = {i} end",
                                                  limits: RunLimits(instructions: 1 << 40, memoryBytes: 4 << 20, timeMillis: 5_000)))
        guard case .failed("memory_limit", _) = outcome else { Issue.record("got \(outcome)"); return }
    }

    @Test func aCrashingWorkerIsReportedAndTheCallerGoesOn() throws {
        let dir = try Keyhost.scratch(["crash.sh": "#!/bin/sh\nkill -SEGV $$\n", "hang.sh": "#!/bin/sh\nexec sleep 30\n",
                                       "garbage.sh": "#!/bin/sh\nprintf '\\000\\000\\000\\003abc'\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["crash.sh", "hang.sh", "garbage.sh"] {
            chmod(dir.appendingPathComponent(name).path, 0o755)
        }
        let crash = WorkerRunner(executable: dir.appendingPathComponent("crash.sh").path).run(try Self.request("return"))
        guard case .failed("crashed", let message) = crash else { Issue.record("got \(crash)"); return }
        #expect(message.contains("SIGSEGV"))

        var hang = WorkerRunner(executable: dir.appendingPathComponent("hang.sh").path)
        hang.grace = 0.2
        let started = Date()
        let hung = hang.run(try Self.request("return", limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 100)))
        guard case .failed("time_limit", _) = hung else { Issue.record("got \(hung)"); return }
        #expect(Date().timeIntervalSince(started) < 60) // a hung worker is ended, not waited for (60 s: a bound no load reaches)

        let garbage = WorkerRunner(executable: dir.appendingPathComponent("garbage.sh").path).run(try Self.request("return"))
        guard case .failed("crashed", let m3) = garbage else { Issue.record("got \(garbage)"); return }
        #expect(m3.contains("malformed"))
    }

    /// A warm worker serves several runs, each in a fresh Lua state, and is replaced after a failure.
    @Test func aWarmWorkerServesManyRunsAndIsReplacedAfterAFailure() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 8)
        for i in 0..<10 {
            let outcome = runner.run(try Self.request("local t = ... t.emit(rawget(_ENV, 'leak') == nil) leak = \(i)"))
            #expect(outcome == .completed(effects: [.bool(true)]), "run \(i)")
        }
        let failed = runner.run(try Self.request("while true do end", limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 1000)))
        guard case .failed("instruction_limit", _) = failed else { Issue.record("got \(failed)"); return }
        #expect(runner.run(try Self.request("local t = ... t.emit(1)")) == .completed(effects: [.unsigned(1)]))
    }

    /// The fork server: every run is its own child of one warmed server, so nothing a run leaves
    /// behind reaches the next, a failed run costs no new server, and a child killed from outside is
    /// reported as a crash of that run alone.
    @Test func forkedRunsShareNothingAndTheServerOutlivesFailures() throws {
        let runner = WorkerRunner(forkingFrom: Keyhost.binary.path, runsPerServer: 100)
        defer { runner.stop() }
        for i in 0..<6 {
            let outcome = runner.run(try Self.request("local t = ... t.emit(rawget(_ENV, 'leak') == nil) leak = \(i)"))
            #expect(outcome == .completed(effects: [.bool(true)]), "run \(i)")
        }
        let server = try #require(runner.processID)
        #expect(Self.forkServers().contains(server))
        let bomb = runner.run(try Self.request("local t = {} for i = 1, 1e8 do t[i] = {i} end",
                                               limits: RunLimits(instructions: 1 << 40, memoryBytes: 4 << 20, timeMillis: 5_000)))
        guard case .failed("memory_limit", _) = bomb else { Issue.record("got \(bomb)"); return }
        let loop = runner.run(try Self.request("while true do end", limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 1000)))
        guard case .failed("instruction_limit", _) = loop else { Issue.record("got \(loop)"); return }
        #expect(runner.run(try Self.request("local t = ... t.emit(t.args.n)")) == .completed(effects: [.unsigned(3)]))
        #expect(runner.processID == server, "the same fork server serves runs after failures")

        // A run's child killed from outside: that run fails as a crash, the server goes on.
        let killer = Thread {
            // Wait for the state (a child of the server exists), never for a clock.
            while true {
                if let child = Self.children(of: server).first { kill(child, SIGKILL); return }
                usleep(2000)
            }
        }
        killer.start()
        let killed = runner.run(try Self.request("while true do end", limits: RunLimits(instructions: 1 << 40, memoryBytes: 1 << 20, timeMillis: 60_000)))
        guard case .failed("crashed", let message) = killed else { Issue.record("got \(killed)"); return }
        #expect(message.contains("SIGKILL"), "\(message)")
        #expect(runner.run(try Self.request("local t = ... t.emit(1)")) == .completed(effects: [.unsigned(1)]))
        #expect(runner.processID == server)

        // The server itself killed between runs: the next run starts a new one, once, and runs.
        kill(server, SIGKILL)
        while Self.forkServers().contains(server), !Self.procFile("/proc/\(server)/stat").contains(") Z") {
            usleep(2000)
        }
        let after = runner.run(try Self.request("local t = ... t.emit(2)"))
        #expect(after == .completed(effects: [.unsigned(2)]), "\(after)")
        #expect(runner.processID != server && !Self.forkServers().contains(server))
    }

    /// A warm worker started from a thread that has since ended still serves. Linux sends a child
    /// its parent-death signal when the thread that started it ends (a batch's lane, a Dispatch
    /// thread), so workers are started from a thread that lasts as long as the process.
    @Test func aWorkerOutlivesTheThreadThatStartedIt() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 8)
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var task = ""
        nonisolated(unsafe) var first: RunOutcome?
        let starter = Thread {
            task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            // A run first: the worker asks for its parent-death signal before it serves, so once it
            // has answered, the signal is tied to this thread (a thread that ended before would have
            // handed its children to another).
            first = try? runner.run(Self.request("local t = ... t.emit(0)"))
            started.signal()
        }
        starter.start()
        started.wait()
        #expect(first == .completed(effects: [.unsigned(0)]))
        let worker = try #require(runner.processID)
        try #require(task.contains("/task/"))
        // Once the thread is gone from /proc the kernel has sent any parent-death signal it was owed.
        while FileManager.default.fileExists(atPath: "/proc/\(task)") { usleep(2000) }
        let second = runner.run(try Self.request("local t = ... t.emit(1)"))
        #expect(second == .completed(effects: [.unsigned(1)]), "\(second)")
        #expect(runner.processID == worker, "the worker started from the ended thread served the run")
    }

    /// A worker started for a Dispatch thread (as the ledger's are) blocks no signal: Dispatch's
    /// threads block most of them, SIGXCPU among them, and a blocked SIGXCPU would void the run's
    /// kernel CPU limit (an exec keeps the mask).
    @Test func aWorkerStartedForADispatchThreadBlocksNoSignal() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 8)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: RunOutcome?
        nonisolated(unsafe) var dispatchMask = ""
        DispatchQueue.global().async {
            dispatchMask = Self.statusField("SigBlk", of: "thread-self")
            outcome = try? runner.run(Self.request("local t = ... t.emit(1)"))
            done.signal()
        }
        done.wait()
        #expect(outcome == .completed(effects: [.unsigned(1)]))
        #expect(dispatchMask != "0000000000000000", "the premise: Dispatch's thread blocks signals (\(dispatchMask))")
        let worker = try #require(runner.processID)
        #expect(Self.statusField("SigBlk", of: String(worker)) == "0000000000000000")
    }

    /// The runners of every kind: a fresh exec'd worker per run, a warm worker, a fork server's children.
    static func everyKindOfRunner() -> [(String, WorkerRunner)] {
        [("fresh", WorkerRunner(executable: Keyhost.binary.path)), ("warm", WorkerRunner(executable: Keyhost.binary.path, runsPerWorker: 8)),
         ("forked", WorkerRunner(forkingFrom: Keyhost.binary.path))]
    }

    /// An error of any length comes back cut, from every kind of worker, and the worker that made it never
    /// blocks on a pipe nobody reads (over about 128 KiB it used to, and the runner waited for it forever).
    @Test func longErrorsComeBackCutAndTheRunnerGoesOn() throws {
        let limits = RunLimits(instructions: 1 << 40, memoryBytes: 256 << 20, timeMillis: 30_000)
        for (kind, runner) in Self.everyKindOfRunner() {
            defer { runner.stop() }
            for bytes in [70_000, 200_000, 16 << 20] {
                let outcome = runner.run(try Self.request("error(string.rep('e', \(bytes)), 0)", limits: limits))
                guard case .failed("program", let message) = outcome else { Issue.record("\(kind) \(bytes): got \(outcome)"); continue }
                #expect(message.utf8.count <= RunOutcome.maxMessageBytes, "\(kind) \(bytes)")
                // The text is the error and its traceback, cut.
                #expect(message.hasPrefix("eeee") && message.contains(" bytes, cut to the first \(RunOutcome.maxMessageBytes))"), "\(kind) \(bytes)")
            }
            // Records up to the output limit still come back whole.
            let records = runner.run(try Self.request("local t = ... for i = 1, 1000 do t.emit(string.rep('r', 60)) end", limits: limits))
            guard case .completed(let effects, _) = records else { Issue.record("\(kind): got \(records)"); continue }
            #expect(effects.count == 1000 && effects.allSatisfy { $0 == .text(String(repeating: "r", count: 60)) }, "\(kind)")
            #expect(runner.run(try Self.request("local t = ... t.emit(t.args.n)")) == .completed(effects: [.unsigned(3)]), "\(kind)")
        }
    }

    /// A cut message keeps whole characters.
    @Test func aCutMessageIsValidUTF8() throws {
        let runner = WorkerRunner(executable: Keyhost.binary.path)
        let outcome = runner.run(try Self.request("error(string.rep('é', 10000), 0)"))
        guard case .failed("program", let message) = outcome else { Issue.record("got \(outcome)"); return }
        #expect(message.hasPrefix("éé") && !message.contains("\u{FFFD}") && message.utf8.count <= RunOutcome.maxMessageBytes)
    }

    /// Under the Lua sandbox, the kernel's: every process that runs a program has no_new_privs and a seccomp
    /// filter, and holds descriptors 0-2 only, so no child of a fork server holds another run's pipes.
    @Test func workersRunUnderNoNewPrivsAndSeccompWithTheirOwnPipesOnly() throws {
        for (kind, runner) in Self.everyKindOfRunner() where kind != "fresh" {
            defer { runner.stop() }
            #expect(runner.run(try Self.request("local t = ... t.emit(1)")) == .completed(effects: [.unsigned(1)]))
            let worker = try #require(runner.processID)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var outcome: RunOutcome?
            let thread = Thread {
                outcome = try? runner.run(Self.request("while true do end", limits: RunLimits(instructions: 1 << 40, memoryBytes: 1 << 20, timeMillis: 60_000)))
                done.signal()
            }
            thread.start()
            // The processes running programs: the warm worker itself, or the server's children (the one
            // running and the spare forked for the next run, once both exist).
            var running: [pid_t] = []
            for _ in 0..<30_000 {
                running = kind == "forked" ? Self.children(of: worker) : [worker]
                if running.count == (kind == "forked" ? 2 : 1), running.contains(where: { Self.statusField("State", of: String($0)).hasPrefix("R") }) { break }
                usleep(2000)
            }
            #expect(running.count == (kind == "forked" ? 2 : 1), "\(kind): \(running)")
            for pid in running {
                #expect(Self.statusField("NoNewPrivs", of: String(pid)) == "1", "\(kind) \(pid)")
                #expect(Self.statusField("Seccomp", of: String(pid)) == "2", "\(kind) \(pid)")
                let fds = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap(Int.init).sorted()
                #expect(fds == [0, 1, 2], "\(kind) \(pid): \(fds)")
            }
            if kind == "forked" { #expect(Self.statusField("NoNewPrivs", of: String(worker)) == "1") }
            for pid in running { kill(pid, SIGKILL) }
            done.wait()
            guard case .failed("crashed", _)? = outcome else { Issue.record("\(kind): got \(String(describing: outcome))"); continue }
        }
    }

    /// A field of /proc/WHO/status ("" when it cannot be read).
    static func statusField(_ name: String, of who: String) -> String {
        let lines = procFile("/proc/\(who)/status").split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix(name + ":") }) else { return "" }
        return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
    }

    /// A fork server that never answers is ended at the run's wall-clock deadline.
    @Test func aForkServerThatHangsIsStoppedAtTheDeadline() throws {
        let dir = try Keyhost.scratch(["hang.sh": "#!/bin/sh\nexec sleep 30\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        chmod(dir.appendingPathComponent("hang.sh").path, 0o755)
        let runner = WorkerRunner(forkingFrom: dir.appendingPathComponent("hang.sh").path)
        runner.grace = 0.2
        let hung = runner.run(try Self.request("return", limits: RunLimits(instructions: 1000, memoryBytes: 1 << 20, timeMillis: 100)))
        guard case .failed("time_limit", _) = hung else { Issue.record("got \(hung)"); return }
    }

    /// This test process's fork servers (`token _worker --fork` children).
    static func forkServers() -> [pid_t] {
        children(of: getpid()).filter { pid in procFile("/proc/\(pid)/cmdline").contains("--fork") }
    }

    /// A /proc file's text with NULs as spaces, or "" when its process is gone.
    static func procFile(_ path: String) -> String {
        String((ProcFile.text(path) ?? "").map { $0 == "\0" ? " " : $0 })
    }

    /// Live (not zombie) children of `parent`, from /proc.
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            let stat = procFile("/proc/\(pid)/stat")
            guard let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > 1 && fields[0] != "Z" && Int32(fields[1]) == parent
        }
    }
}
