import KeyhostFiles
import ArgumentParser
import KeyhostWallet

#if canImport(Glibc)
import Glibc
#endif

/// `--wallet PATH`, shared by every command that uses a token wallet.
struct WalletOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The wallet file (default: $\(Self.variable), else $XDG_STATE_HOME/keyhost/wallet.db, else ~/.local/state/keyhost/wallet.db).", valueName: "path"))
    var wallet: String?

    /// The wallet's path; the default folder is created 0700 when missing.
    func path() throws -> String { try Self.path(given: wallet) }

    /// The environment variable that names the default wallet, for daily use without --wallet on every command.
    static let variable = "KEYHOST_WALLET"

    /// `given`, else `KEYHOST_WALLET`, or the default wallet's path (its folder created 0700 when missing).
    static func path(given wallet: String?) throws -> String {
        if let wallet { return wallet }
        if let raw = getenv(variable), raw.pointee != 0 { return String(cString: raw) }
        guard let folder = StateDirectory.path() else {
            throw Failure.kind("not_found", "cannot find a place for the wallet: set HOME or XDG_STATE_HOME, or give --wallet PATH")
        }
        if let problem = StateDirectory.create(folder) { throw Failure.kind("io", problem) }
        return folder + "/wallet.db"
    }

    /// Opens the initialised wallet.
    func open() throws -> TokenWallet { try Self.open(given: wallet) }

    /// Opens the initialised wallet at `given`, or the default one.
    static func open(given wallet: String?) throws -> TokenWallet { try TokenWallet(path: try path(given: wallet)) }
}

/// The current time, Unix seconds: the `now` of a run.
func currentUnixTime() -> Int64 { Int64(time(nil)) }
