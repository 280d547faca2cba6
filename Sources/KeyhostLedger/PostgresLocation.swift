#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; the password may instead come from
/// PGPASSWORD, and is never shown.
///
/// Parsed here, without a database driver: keyhost reads the URL to give good errors and hands
/// the database to the `keyhost-ledger` program (`LedgerProcess`), the only one that links PostgreSQL.
public struct PostgresLocation: Sendable, Equatable {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String

    public init(user: String, password: String? = nil, host: String, port: Int = 5432, database: String) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
    }

    /// What follows `postgres://` or `postgresql://`; nil for any other text.
    static func afterScheme(_ text: String) -> Substring? {
        for scheme in ["postgres://", "postgresql://"] where text.hasPrefix(scheme) { return text.dropFirst(scheme.count) }
        return nil
    }

    /// The URL without the password, for messages and logs.
    public var display: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `environment` stands in for the process's own (PGPASSWORD) when given.
    public init(url text: String, environment: [String: String]? = nil) throws {
        let usage = "expected postgres://USER@HOST:PORT/DATABASE"
        guard let rest = Self.afterScheme(text) else { throw LedgerError(kind: "location", message: "not a PostgreSQL URL: \(usage)") }
        guard let at = rest.lastIndex(of: "@") else { throw LedgerError(kind: "location", message: "the PostgreSQL URL names no user: \(usage)") }
        let credentials = rest[..<at]
        let hostPart = rest[rest.index(after: at)...]
        if let colon = credentials.firstIndex(of: ":") {
            user = String(credentials[..<colon])
            password = removingPercentEncoding(credentials[credentials.index(after: colon)...])
        } else {
            user = String(credentials)
            if let environment {
                password = environment["PGPASSWORD"]
            } else {
                password = getenv("PGPASSWORD").map { String(cString: $0) }
            }
        }
        guard let slash = hostPart.firstIndex(of: "/") else { throw LedgerError(kind: "location", message: "the PostgreSQL URL names no database: \(usage)") }
        database = String(hostPart[hostPart.index(after: slash)...])
        let address = hostPart[..<slash]
        if let colon = address.lastIndex(of: ":") {
            guard let port = Int(address[address.index(after: colon)...]), (1...65535).contains(port) else {
                throw LedgerError(kind: "location", message: "the PostgreSQL URL's port is not a number from 1 to 65535: \(usage)")
            }
            self.port = port
            host = String(address[..<colon])
        } else {
            port = 5432
            host = String(address)
        }
        guard !user.isEmpty, !host.isEmpty, !database.isEmpty, !database.contains("?") else {
            throw LedgerError(kind: "location", message: "the PostgreSQL URL needs a user, a host and a database, and takes no options: \(usage)")
        }
    }
}
