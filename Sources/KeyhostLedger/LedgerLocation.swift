/// Where a ledger's records are: `sqlite:FILE` or `postgres://USER@HOST:PORT/DB`.
public enum LedgerLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw LedgerError(kind: "location", message: "sqlite: needs a file name (sqlite:FILE)") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(url: text))
        } else {
            throw LedgerError(kind: "location", message: "a ledger database is sqlite:FILE or postgres://USER@HOST:PORT/DB, got one starting \(String(text.prefix(while: { $0 != ":" && $0 != "@" }).prefix(20)).debugDescription)")
        }
    }

    /// Opens the store (creating its tables when missing).
    public func open() async throws -> any LedgerStore {
        switch self {
        case .sqlite(let path): return try SQLiteLedgerStore(path: path)
        case .postgres(let location): return try await PostgresLedgerStore(location: location)
        }
    }
}
