/// A command line is readable by every user of the machine (`ps`, `/proc/PID/cmdline`) for as long as
/// the process runs, so a PostgreSQL password may not arrive on one: it comes from `PGPASSWORD`.
/// (A URL a Lua script passes to `token.ledger.open` is no command line and may hold one: keyhost hands
/// it on to its `keyhost-ledger` child in `PGPASSWORD`.)
public enum CommandLinePassword {
    /// Refuses `postgres://USER:PASSWORD@…` given as `option`; any other text passes (its own parser judges it).
    public static func refuse(_ text: String, option: String) throws {
        guard PostgresLocation.hasPassword(url: text) else { return }
        throw LedgerError(kind: "location", message:
            "\(option) has a password in its postgres:// URL, where every user of this machine can read it (ps, /proc/PID/cmdline): give postgres://USER@HOST:PORT/DB and put the password in the PGPASSWORD environment variable")
    }
}

extension PostgresLocation {
    /// Whether a `postgres://` or `postgresql://` URL carries `USER:PASSWORD@` (even an empty password).
    public static func hasPassword(url text: String) -> Bool {
        // As the parser reads it: credentials end at the last '@'.
        guard let rest = afterScheme(text), let at = rest.lastIndex(of: "@") else { return false }
        return rest[..<at].contains(":")
    }
}
