import ArgumentParser

/// The options of `keyhost token ledger serve`, which are those of `keyhost-ledger serve`: keyhost
/// describes them (help, man pages, completions) and passes them on when it execs the server.
public struct LedgerServeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where to listen, HOST:PORT (e.g. 127.0.0.1:8080).", valueName: "host:port")) public var listen: String
    @Option(help: ArgumentHelp("The database: sqlite:FILE or postgres://USER@HOST:PORT/DB (password from PGPASSWORD).", valueName: "db")) public var db: String
    @Option(help: ArgumentHelp("An issuer this ledger serves: x-only public key in hex. Repeat for several.", valueName: "hex")) public var issuer: [String] = []
    @Option(help: ArgumentHelp("The largest request body in KiB.", valueName: "kib")) public var maxBodyKib: Int = 4096
    @Option(help: ArgumentHelp("How long a request may take to arrive in full, headers and body, in seconds; then its connection is closed.", valueName: "seconds"))
    public var requestTimeout: Double = 60
    @Option(help: ArgumentHelp("The most connections held at once (default: 4096, or fewer when the descriptor limit, ulimit -n, leaves less).", valueName: "n"))
    public var maxConnections: Int?
    @Option(help: ArgumentHelp("The most connections one client address (an IPv6 /64) may hold.", valueName: "n")) public var maxConnectionsPerClient: Int = 32
    @Option(help: ArgumentHelp("The most links of chains not deposited before that one request may ask to verify (each a signature check and a re-run of the token's program); more is answered 413 too_much_work.", valueName: "n"))
    public var maxLinksPerRequest: Int = 1024
    @Option(help: ArgumentHelp("How many links a second one client address may have verified, on average (bursts up to --max-links-per-request); more is answered 429 rate_limited with Retry-After.", valueName: "n"))
    public var linksPerSecondPerClient: Int = 64

    public init() {}

    /// The same options as command-line arguments, with `db` in place of the database given.
    public func arguments(db: String) -> [String] {
        ["--listen", listen, "--db", db, "--max-body-kib", String(maxBodyKib), "--request-timeout", String(requestTimeout),
         "--max-connections-per-client", String(maxConnectionsPerClient), "--max-links-per-request", String(maxLinksPerRequest),
         "--links-per-second-per-client", String(linksPerSecondPerClient)]
            + (maxConnections.map { ["--max-connections", String($0)] } ?? []) + issuer.flatMap { ["--issuer", $0] }
    }

    public static let abstract = "Run the ledger's HTTP service: POST /v1/deposit, GET /v1/stats, GET /v1/health."
    public static let discussion = "Prints 'listening on http://HOST:PORT' once it accepts connections (PORT 0 picks a free port). Stops on SIGINT or SIGTERM."
}
