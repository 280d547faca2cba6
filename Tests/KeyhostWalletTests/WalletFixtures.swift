import Foundation
import KeyhostCrypto
import KeyhostTokens
import KeyhostTestSupport
@testable import KeyhostWallet

/// Signed tokens and throwaway wallet files for the wallet tests.
enum Fixture {
    static let issuerKey = try! PrivateKey(bytes: Hex.decode("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))
    static let holderKey = try! PrivateKey(bytes: Hex.decode("8bdd21f1ac8c1e2ef3c1e3bd3ac8c6a9d2a6cb79c9d1d44a4b7bb8e2bd4e9a51"))

    /// A 32-byte id starting with `prefix`, the rest filled with `fill`.
    static func id(_ prefix: [UInt8], fill: UInt8 = 0x11) -> [UInt8] {
        prefix + [UInt8](repeating: fill, count: 32 - prefix.count)
    }

    /// A token with `id`, signed by `issuerKey`.
    static func token(_ id: [UInt8], program: String = "return token.value") -> SignedToken {
        let token = Token(
            id: id, issuer: issuerKey.publicKey.xOnly, value: 500, unit: "EUR-cent",
            program: TokenProgram(kind: .luaSource, code: Array(program.utf8)), holder: holderKey.publicKey)
        return try! SignedToken.issue(token, issuerKey: issuerKey)
    }

    /// A pid that belonged to a process which has exited and been reaped.
    static func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// An owner that cannot be alive: a reaped pid with a made-up start time, on this boot.
    static func deadOwner() throws -> RunOwner {
        RunOwner(pid: try deadPID(), startTime: 4242, bootID: RunOwner.current().bootID)
    }
}

/// A new wallet in a temporary directory.
func withWallet<T>(_ body: (TokenStore) throws -> T) throws -> T {
    try withTemporaryDirectory(prefix: "keyhost-wallet") { directory in try body(try TokenStore(path: directory + "/wallet.khw")) }
}

/// The file mode bits of `path`.
func fileMode(_ path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    return info.st_mode & 0o777
}

/// The `WalletError` thrown by `body`, or nil if it threw nothing or something else.
func walletError<T>(_ body: () throws -> T) -> WalletError? { thrown(WalletError.self, body) }

/// A child process (`/bin/sleep`) that the test kills and reaps itself, so it can be seen alive,
/// as a zombie, and gone.
final class ChildProcess {
    let pid: pid_t
    private var reaped = false

    init(seconds: Int = 60) throws {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = ["/bin/sleep", String(seconds)].map { (arg: String) in strdup(arg) } + [nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ)
        guard rc == 0 else { throw POSIXError(.init(rawValue: rc) ?? .EIO) }
        self.pid = pid
    }

    /// Kills it and waits until the kernel shows it as a zombie (not reaped yet).
    func killLeavingZombie() {
        kill(pid, SIGKILL)
        for _ in 0..<30_000 where ProcFS.startTime(of: pid)?.isZombie != true { usleep(10_000) }  // a state; the bound only ends a broken run
    }

    /// Kills and reaps it: afterwards its pid names no process.
    func killAndReap() {
        guard !reaped else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }

    deinit { killAndReap() }
}
