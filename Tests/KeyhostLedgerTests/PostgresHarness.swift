import Foundation
import KeyhostLedger
import KeyhostLedgerPostgres

/// A real PostgreSQL server for the tests: initdb in a temporary folder, listening on 127.0.0.1 at
/// a free port, run as the `postgres` user when the tests run as root (PostgreSQL refuses root).
/// Started once per test process, stopped at exit. Missing binaries are an error, not a skip.
final class PostgresHarness: @unchecked Sendable {
    static let shared: Result<PostgresHarness, Error> = Result { try PostgresHarness() }

    static func get() throws -> PostgresHarness { try shared.get() }

    let dataDirectory: String
    let port: Int
    let binaries: String
    private let asUser: String?

    private init() throws {
        let candidates = ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"]
        guard let binaries = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) else {
            throw HarnessError("PostgreSQL server binaries (initdb, pg_ctl) not found in \(candidates); run scripts/bootstrap (apt-get install postgresql)")
        }
        self.binaries = binaries
        asUser = getuid() == 0 ? "postgres" : nil
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-ledger-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        if asUser != nil { try Self.shell(["chown", "postgres", base]) }
        dataDirectory = base + "/data"
        port = try Self.freePort()
        try run(binaries + "/initdb", ["-D", dataDirectory, "-U", "keyhost", "--auth=trust", "-E", "UTF8", "--no-sync"])
        // Everyone is trusted but `passwordUser`, who must give its password. Written in place, so
        // the file keeps its owner.
        let hba = dataDirectory + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try "host all \(Self.passwordUser) 127.0.0.1/32 scram-sha-256\n\(rules)".write(toFile: hba, atomically: false, encoding: .utf8)
        try run(binaries + "/pg_ctl", [
            "-D", dataDirectory, "-w", "-t", String(Int(patienceSeconds)), "-l", base + "/server.log",
            "-o", "-c listen_addresses=127.0.0.1 -c port=\(port) -c unix_socket_directories=\(base) -c max_connections=200 -c fsync=on", "start",
        ])
        try run(binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "keyhost", "-d", "postgres", "-c",
                                     "CREATE ROLE \(Self.passwordUser) LOGIN PASSWORD '\(Self.password)'"])
        let stopCommand = [binaries + "/pg_ctl", "-D", dataDirectory, "-m", "immediate", "stop"]
        let user = asUser
        Self.atExit.append {
            _ = try? Self.shell(user.map { ["runuser", "-u", $0, "--"] + stopCommand } ?? stopCommand)
            try? FileManager.default.removeItem(atPath: base)
        }
        if !Self.registered {
            Self.registered = true
            atexit { for action in PostgresHarness.atExit { action() } }
        }
    }

    /// How long opening a store, or one of its calls, may take here: a server that answers gets
    /// through, however loaded the machine (PostgresLedgerStore's own 15 s and 60 s are for users).
    static let patience: Duration = .seconds(Int64(patienceSeconds))

    /// A store on `location` with `patience` for every limit.
    static func store(_ location: PostgresLocation) async throws -> PostgresLedgerStore {
        try await PostgresLedgerStore(location: location, callLimit: patience, connectLimit: patience)
    }

    /// The one user that logs in with a password (scram-sha-256), and its password.
    static let passwordUser = "keyhost_pw", password = "right-horse-battery"

    nonisolated(unsafe) static var atExit: [() -> Void] = []
    nonisolated(unsafe) static var registered = false

    /// A new empty database, so tests never see each other's deposits; `owner` may create tables in it.
    func newDatabase(owner: String = "keyhost") throws -> PostgresLocation {
        let name = "ledger_\(UInt64.random(in: 0...UInt64.max))"
        try run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "keyhost", "-O", owner, name])
        return PostgresLocation(user: owner, host: "127.0.0.1", port: port, database: name)
    }

    /// psql's answer to one query, unaligned and without headers.
    func query(_ location: PostgresLocation, _ sql: String) throws -> String {
        try run(binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "keyhost", "-d", location.database, "-At", "-c", sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        try Self.shell((asUser.map { ["runuser", "-u", $0, "--"] } ?? []) + [tool] + arguments)
    }

    /// Runs `command` (found on PATH) to completion; its output goes to a file, not a pipe, because
    /// `pg_ctl start` leaves the server running with the child's descriptors. posix_spawn and
    /// waitpid rather than Foundation's Process, which did not reap `runuser` here.
    @discardableResult
    static func shell(_ command: [String]) throws -> String {
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID().uuidString).out").path
        defer { unlink(outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else: the server lives on, and a pipe another test has open at this moment (a
        // Python oracle's stdin) would otherwise stay open in it, and that oracle never see EOF.
        closeOtherDescriptors(&actions)
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw HarnessError("cannot run \(command[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        guard exited && code == 0 else { throw HarnessError("\(command.joined(separator: " ")) failed (status \(status)): \(text)") }
        return text
    }

    static func freePort() throws -> Int {
        let (fd, port) = try boundSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to a free port on 127.0.0.1, and the port; listening when `backlog` is given.
    static func boundSocket(listening backlog: Int32? = nil) throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, backlog.map({ listen(fd, $0) == 0 }) ?? true else {
            close(fd)
            throw HarnessError("cannot find a free port")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
