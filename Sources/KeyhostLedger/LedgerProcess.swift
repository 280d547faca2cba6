// keyhost's side of a PostgreSQL ledger: a `keyhost-ledger pipe` child on a socket pair, one line
// of JSON each way per call (docs/ledger.md, "keyhost-ledger"):
//
//   child:  {"ready": {"location": "postgres://USER@HOST:PORT/DB"}}   or {"error": {…}}, then it exits
//   keyhost {"deposit": {"chains": ["khchain1:…", …]}}  → {"results": [...]}           or {"error": {…}}
//   keyhost {"stats": {}}                               → {"tokens": …, "units": [...]} or {"error": {…}}
//   keyhost {"close": {}}                               → {"closed": true}, and the child exits
//
// The bodies are the HTTP API's (LedgerJSON). The password never goes into argv: the child gets
// the URL without it and the password in PGPASSWORD. The child ends when keyhost does: it watches
// its end of the socket and exits the moment keyhost's end closes (a killed keyhost included). A
// child that dies is a `store` error naming how it ended, never a hang.

import CKeyhostProcess
import KeyhostCrypto
import KeyhostRecord
import KeyhostTokens
import KeyhostWorkerProcess

#if canImport(Glibc)
import Glibc
#endif

public final class LedgerProcess: TokenLedgerConnection {
    public let displayName: String
    public let issuerCount: Int
    /// The child's process id (tests kill it).
    public let pid: pid_t
    private var socket: Int32
    private var pending: [UInt8] = []
    /// Why the child can no longer be used, once it cannot.
    private var gone: LedgerError?

    /// The longest answer read: a thousand results with their proofs is a few MiB.
    static let maxAnswerBytes = 256 << 20

    /// Starts `keyhost-ledger pipe` for `location` and waits until it has connected (or says why not).
    /// `worker`: the keyhost whose `token _worker` the child re-runs deposited programs with.
    public init(location: PostgresLocation, issuers: [XOnlyPublicKey], worker: String, program: String? = nil) throws {
        displayName = location.display
        issuerCount = issuers.count
        let executable = try program ?? LedgerProgram.path()
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw LedgerError(kind: "store", message: "\(location.display): cannot create a socket for the ledger process: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        let closing = khp_spawn_close_other_descriptors(&actions)
        guard closing == 0 else {
            Glibc.close(fds[0]); Glibc.close(fds[1])
            throw LedgerError(kind: "store", message: "\(location.display): cannot prepare the ledger process's descriptors: \(String(cString: strerror(closing)))")
        }
        // Signals keyhost ignores or blocks are inherited through exec: the child starts with the defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&defaults)
        sigemptyset(&empty)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let arguments = [executable, "pipe", "--db", location.display] + issuers.flatMap { ["--issuer", Hex.encode($0.bytes)] }
        let environment = LedgerProgram.environment(password: location.password, worker: worker)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { if let p { memset(p, 0, strlen(p)); free(p) } }
        }
        var child: pid_t = 0
        var status = posix_spawn(&child, executable, &actions, &attributes, &argv, &envp)
        for _ in 0..<20 where status == ETXTBSY {  // a binary just installed, briefly held open for writing
            usleep(5000)
            status = posix_spawn(&child, executable, &actions, &attributes, &argv, &envp)
        }
        Glibc.close(fds[1])
        guard status == 0 else {
            Glibc.close(fds[0])
            throw LedgerError(kind: "store", message: "\(location.display): cannot start the ledger program \(executable): \(String(cString: strerror(status)))")
        }
        pid = child
        socket = fds[0]
        let ready: JSONValue
        do {
            ready = try answer(during: "connecting")
        } catch {
            finish()
            throw error
        }
        if let error = LedgerJSON.parseError(ready) {
            finish()
            throw error
        }
        guard ready["ready"] != nil else {
            finish()
            throw LedgerError(kind: "protocol", message: "\(displayName): the ledger program \(executable) did not answer as keyhost-ledger does; is it from the same keyhost?")
        }
    }

    deinit { close() }

    public func deposit(_ chains: [TokenChain]) throws -> [DepositResult<FraudProof>] {
        let request = Record.object([("deposit", LedgerJSON.depositBody(chains.map(\.armored)))])
        let answer = try call(request, during: "depositing")
        return try LedgerJSON.depositResults(try LedgerJSON.parseResults(answer, count: chains.count), from: displayName)
    }

    public func stats() throws -> LedgerStats {
        try LedgerJSON.parseStats(try call(.object([("stats", .object([]))]), during: "reading the totals"))
    }

    public func close() {
        guard socket >= 0 else { return }
        if gone == nil { _ = try? call(.object([("close", .object([]))]), during: "closing") }
        finish()
    }

    // MARK: - The exchange

    /// Sends one request line and reads the answer line; the child's error comes back thrown.
    private func call(_ request: Record, during what: String) throws -> JSONValue {
        if let gone { throw gone }
        guard socket >= 0 else { throw LedgerError(kind: "store", message: "\(displayName): the ledger is closed") }
        var line = LedgerJSON.encode(request)
        line.append(UInt8(ascii: "\n"))
        var sent = 0
        while sent < line.count {
            let n = line[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                break  // the child is gone: reading tells how it ended
            }
            sent += n
        }
        let answer = try self.answer(during: what)
        if let error = LedgerJSON.parseError(answer) { throw error }
        return answer
    }

    private func answer(during what: String) throws -> JSONValue {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                do {
                    return try JSONValue.parse(line, maxBytes: Self.maxAnswerBytes)
                } catch {
                    throw fail(LedgerError(kind: "protocol", message: "\(displayName): the ledger process sent a line that is not JSON (\(error)) while \(what)"))
                }
            }
            guard pending.count <= Self.maxAnswerBytes else {
                throw fail(LedgerError(kind: "protocol", message: "\(displayName): the ledger process's answer is over \(Self.maxAnswerBytes) bytes"))
            }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            // A child that died without reading what was sent resets the connection: the same as an end.
            if n < 0 && errno != ECONNRESET {
                throw fail(LedgerError(kind: "store", message: "\(displayName): cannot read from the ledger process: \(String(cString: strerror(errno)))"))
            }
            if n <= 0 {
                let how = reap()
                let retry = what == "depositing" ? "; nothing is known of this deposit: send it again (the same chain gets the same answer)" : ""
                throw fail(LedgerError(kind: "store", message: "\(displayName): the ledger process keyhost-ledger (pid \(pid)) \(how) while \(what)\(retry)"))
            }
            pending += chunk[..<n]
        }
    }

    /// Marks the child unusable; every later call throws `error`.
    private func fail(_ error: LedgerError) -> LedgerError {
        gone = error
        return error
    }

    /// Closes the socket (the child exits on seeing it close) and reaps the child.
    private func finish() {
        if socket >= 0 {
            Glibc.close(socket)
            socket = -1
        }
        _ = reap()
    }

    private var exitText: String?

    /// Waits for the child (killing it after 5 s) and says how it ended.
    private func reap() -> String {
        if let exitText { return exitText }
        var raw: Int32 = 0
        var waited = 0
        while true {
            let r = waitpid(pid, &raw, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { exitText = "ended"; return "ended" }
            if waited == 500 { kill(pid, SIGKILL) }
            usleep(10_000)
            waited += 1
        }
        let text: String
        if raw & 0x7f == 0 {
            text = "exited with status \((raw >> 8) & 0xff)"
        } else {
            let signal = raw & 0x7f
            text = "was killed by signal \(signal)\(signal == SIGKILL ? " (SIGKILL)" : signal == SIGINT ? " (SIGINT)" : "")"
        }
        exitText = text
        return text
    }
}

/// Finding `keyhost-ledger`, the program that runs the ledger's HTTP service and its PostgreSQL
/// databases (keyhost links neither).
public enum LedgerProgram {
    public static let name = "keyhost-ledger"

    /// Next to the running executable first (an install, a build folder), then on PATH.
    public static func path() throws -> String {
        if let found = CompanionProgram.find(name) { return found }
        throw LedgerError(kind: "store", message: """
            the ledger program \(name) is not installed: not next to this keyhost (\(CompanionProgram.runningDirectory ?? "?")) nor on PATH; \
            the ledger's HTTP service and PostgreSQL ledgers run in it. Install it with scripts/install PREFIX \
            (it installs keyhost and \(name)), or build it with 'swift build --product \(name)'
            """)
    }

    /// This process's environment for the child, with PGPASSWORD set to `password` (or removed)
    /// and `KEYHOST_WORKER` to the keyhost that re-runs deposited programs.
    public static func environment(password: String?, worker: String) -> [String] {
        var out: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if !text.hasPrefix("PGPASSWORD="), !text.hasPrefix(WorkerProgram.environmentName + "=") { out.append(text) }
            entry += 1
        }
        if let password { out.append("PGPASSWORD=" + password) }
        out.append(WorkerProgram.environmentName + "=" + worker)
        return out
    }
}
