import Foundation

/// A child process with its output in a file (posix_spawn: the tests must kill -9 servers and
/// start many clients at once, with nothing Foundation's Process adds in between).
final class Child: @unchecked Sendable {
    let pid: pid_t
    let outputPath: String
    private(set) var status: Int32?

    /// `environment` replaces this process's (KEY=VALUE entries) when given.
    init(_ executable: String, _ arguments: [String], environment: [String]? = nil) throws {
        outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).out").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // No other descriptor: servers and psql holders outlive the moment, and must not keep
        // another test's pipes open (see PostgresHarness.shell).
        closeOtherDescriptors(&actions)
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for p in envp ?? [] { free(p) } }
        var pid: pid_t = 0
        let result = envp == nil ? posix_spawn(&pid, executable, &actions, nil, &argv, environ) : posix_spawn(&pid, executable, &actions, nil, &argv, &envp!)
        guard result == 0 else { throw HarnessError("cannot start \(executable): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The exit code (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        status = code
        return code
    }

    func kill(_ signal: Int32) { _ = Glibc.kill(pid, signal) }

    deinit {
        if status == nil { Glibc.kill(pid, SIGKILL); wait() }
        unlink(outputPath)
    }

    static let keyhost: String = {
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("keyhost").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/keyhost").path
    }()

    /// `keyhost token ledger serve` on a free port with `options` added; returns once it prints its
    /// address. `descriptors`: its descriptor limit (`ulimit -n`), set by a shell that then execs it.
    static func ledgerServer(db: String, issuers: [String], options: [String] = [], descriptors: Int? = nil) throws -> (Child, String) {
        let command = [keyhost, "token", "ledger", "serve", "--listen", "127.0.0.1:0", "--db", db] + issuers.flatMap { ["--issuer", $0] } + options
        let server = try descriptors.map { try Child("/bin/sh", ["-c", "ulimit -n \($0) && exec \"$@\"", "sh"] + command) }
            ?? Child(command[0], Array(command.dropFirst()))
        let deadline = Date().addingTimeInterval(patienceSeconds)
        while Date() < deadline {
            if let range = server.output.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                return (server, String(server.output[range]))
            }
            var raw: Int32 = 0
            if waitpid(server.pid, &raw, WNOHANG) == server.pid {
                server.status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                throw HarnessError("the ledger server exited: \(server.output)")
            }
            usleep(20_000)
        }
        throw HarnessError("the ledger server did not start in \(Int(patienceSeconds)) s: \(server.output)")
    }
}

/// Writes `text` to a new temporary file and returns its path.
func temporaryFile(_ text: String, suffix: String = ".txt") throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)\(suffix)").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Adds "close every descriptor from 3 up" to `actions` (glibc's posix_spawn_file_actions_addclosefrom_np,
/// which Swift's Glibc module does not declare). A child spawned while another test has a pipe
/// open would otherwise keep that pipe's end open for as long as it lives.
func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        fatalError("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)")
    }
    let status = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    precondition(status == 0, "posix_spawn_file_actions_addclosefrom_np: \(status)")
}
