import Foundation
import Testing

/// A PostgreSQL password is never taken on a command line (every user can read it in `ps`): each
/// option that takes a postgres:// URL refuses one with a password, before connecting, and says where
/// the password goes. The password itself is not repeated.
@Suite struct LedgerPasswordTests {
    static let url = "postgres://keyhost:Pw-4711-secret@127.0.0.1:1/ledger"
    /// The generator point's x coordinate: a valid x-only key.
    static let issuer = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"

    @Test func everyCommandLineURLWithAPasswordIsRefused() throws {
        let dir = try Keyhost.scratch(["chains.txt": "\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let ledger = Keyhost.binary.deletingLastPathComponent().appendingPathComponent("keyhost-ledger")
        let cases: [(URL?, [String], String)] = [
            (nil, ["token", "ledger", "stats", "--db", Self.url], "--db"),
            (nil, ["token", "deposit", "chains.txt", "--ledger", Self.url, "--issuer", Self.issuer], "--ledger"),
            (nil, ["token", "ledger", "serve", "--listen", "127.0.0.1:0", "--db", Self.url, "--issuer", Self.issuer], "--db"),
            (ledger, ["serve", "--listen", "127.0.0.1:0", "--db", Self.url, "--issuer", Self.issuer], "--db"),
            (ledger, ["pipe", "--db", Self.url], "--db"),
            // An empty password is still a password written on the command line.
            (nil, ["token", "ledger", "stats", "--db", "postgresql://keyhost:@127.0.0.1:1/ledger"], "--db"),
        ]
        for (executable, arguments, option) in cases {
            let run = try Keyhost.run(arguments, cwd: dir, executable: executable)
            let said = run.stdout + run.stderr
            #expect(run.status == 1 && !run.signaled, "\(arguments): \(run.status) \(said)")
            #expect(said.contains("\(option) has a password in its postgres:// URL, where every user of this machine can read it (ps, /proc/PID/cmdline): give postgres://USER@HOST:PORT/DB and put the password in the PGPASSWORD environment variable"), "\(arguments): \(said)")
            #expect(!said.contains("Pw-4711"), "\(arguments): \(said)")
        }
    }
}
