#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// How many connections the service holds and how long a request may take to arrive
/// (`--max-connections`, `--max-connections-per-client`, `--request-timeout`; docs/ledger.md).
public struct ConnectionLimits: Sendable, Equatable {
    /// Connections held at once, from every client together.
    public var total: Int
    /// Connections one client address may hold.
    public var perClient: Int
    /// From a connection's start, or the end of its previous answer, until the request's last
    /// body byte. A client that drips its request is closed here, however busy it keeps the line.
    public var requestTimeout: Duration

    public static let defaultPerClient = 32
    public static let defaultRequestTimeout: Duration = .seconds(60)
    /// The default total where descriptors are plentiful.
    public static let defaultTotal = 4096

    /// Sockets that may be open beyond `total`: accepted only to be closed (over a limit).
    public static let refusing = 32

    /// Descriptors kept for everything but held client sockets: standard streams, the listener,
    /// the event loops' epoll, eventfd and timerfd, the database (SQLite's three files,
    /// PostgreSQL's pool), and `refusing`. A server out of descriptors cannot accept even to
    /// refuse, and `/v1/health` times out for everyone.
    public static func reserved(cores: Int = System.coreCount) -> Int { refusing + 32 + 4 * cores }

    public init(total: Int, perClient: Int = defaultPerClient, requestTimeout: Duration = defaultRequestTimeout) {
        self.total = total
        self.perClient = perClient
        self.requestTimeout = requestTimeout
    }

    /// The limits for this process: `total` nil is the default, and any total must leave
    /// `reserved` of the descriptor limit (RLIMIT_NOFILE) free.
    public static func resolve(
        total: Int?, perClient: Int = defaultPerClient, requestTimeoutSeconds: Double = 60,
        descriptors: Int = descriptorLimit(), cores: Int = System.coreCount
    ) throws -> ConnectionLimits {
        guard requestTimeoutSeconds.isFinite, requestTimeoutSeconds >= 0.1, requestTimeoutSeconds <= 86_400 else {
            throw LimitError("--request-timeout must be a number of seconds from 0.1 to 86400, got \(requestTimeoutSeconds)")
        }
        guard perClient >= 1 else { throw LimitError("--max-connections-per-client must be at least 1, got \(perClient)") }
        let reserve = reserved(cores: cores)
        let room = descriptors - reserve
        guard room >= 1 else {
            throw LimitError("the descriptor limit (ulimit -n) is \(descriptors), and the service keeps \(reserve) of them for itself; raise it (ulimit -n 1024)")
        }
        if let total {
            guard total >= 1 else { throw LimitError("--max-connections must be at least 1, got \(total)") }
            guard total <= room else {
                throw LimitError("--max-connections \(total) does not fit the descriptor limit (ulimit -n \(descriptors), of which the service keeps \(reserve)): give at most \(room), or raise the limit")
            }
        }
        let timeout = Duration.milliseconds(Int64((requestTimeoutSeconds * 1000).rounded()))
        return ConnectionLimits(total: total ?? min(defaultTotal, room), perClient: perClient, requestTimeout: timeout)
    }

    /// The soft RLIMIT_NOFILE (what `ulimit -n` set), capped to what an Int counts.
    public static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        // RLIM_INFINITY is all ones, beyond Int.max too.
        return limit.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}

/// A limit that cannot be used, said as the option's user would fix it.
public struct LimitError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
