#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// At most `perSecond` requests a second over everything that shares it (every wallet of a discovery job):
/// requests are spaced at least 1/`perSecond` apart, so no second-long window sees more than `perSecond`
/// of them, not even at the start (a token bucket would allow a burst twice the rate there).
public final class RateLimiter: Sendable {
    public let perSecond: Double
    private let interval: UInt64
    /// The monotonic time the next request may go out.
    private let next = Mutex<UInt64>(0)

    public init(perSecond: Double) {
        self.perSecond = perSecond
        interval = UInt64(1_000_000_000 / perSecond)
    }

    /// Waits for this request's turn.
    public func wait() {
        let now = monotonicNow()
        let turn = next.withLock { next -> UInt64 in
            let turn = max(now, next)
            next = turn + interval
            return turn
        }
        guard turn > now else { return }
        var delay = timespec(tv_sec: Int((turn - now) / 1_000_000_000), tv_nsec: Int((turn - now) % 1_000_000_000))
        var left = timespec()
        while nanosleep(&delay, &left) != 0 && errno == EINTR { delay = left }
    }
}
