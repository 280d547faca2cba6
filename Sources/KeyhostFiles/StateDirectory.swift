#if canImport(Glibc)
import Glibc
#endif

/// Where keyhost keeps what it writes for itself (wallet, pairings, REPL history): one rule for every
/// caller. `$XDG_STATE_HOME/keyhost` when XDG_STATE_HOME is absolute (the XDG spec says a relative one
/// is invalid and must be ignored, or history would land under whatever folder keyhost ran in), else
/// `$HOME/.local/state/keyhost`, else the home folder of the user's passwd entry.
public enum StateDirectory {
    /// The folder, or nil when neither variable nor the passwd entry gives a home.
    public static func path(environment: (String) -> String? = StateDirectory.processEnvironment) -> String? {
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") {
            return state + "/keyhost"
        }
        guard let home = environment("HOME").flatMap({ $0.isEmpty ? nil : $0 }) ?? passwdHome() else { return nil }
        return home + "/.local/state/keyhost"
    }

    /// Creates `path` and any missing folder above it, mode 0700; nil when it exists or was made, else
    /// what failed (the folder and strerror's text).
    public static func create(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if access(prefix, F_OK) == 0 { continue }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                return "cannot create \(prefix): \(String(cString: strerror(errno)))"
            }
        }
        return nil
    }

    /// A variable of this process's environment.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    private static func passwdHome() -> String? {
        guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir, dir.pointee != 0 else { return nil }
        return String(cString: dir)
    }
}
