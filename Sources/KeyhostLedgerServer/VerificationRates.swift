#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Each client address's allowance of links to verify, shared by all its connections: a token
/// bucket that holds up to `limits.linksPerRequest` and refills at `limits.linksPerSecondPerClient`.
/// A request takes its links before any is verified, and takes nothing when refused.
final class VerificationRates: Sendable {
    let limits: VerificationLimits
    /// Seconds on a monotonic clock.
    private let clock: @Sendable () -> Double
    private let buckets = Mutex([String: Bucket]())

    private struct Bucket {
        var level: Double
        var updated: Double
    }

    /// Buckets kept before the full ones (clients that have not asked for a while) are dropped.
    static let pruneAbove = 4096

    init(limits: VerificationLimits, clock: @escaping @Sendable () -> Double = VerificationRates.monotonicSeconds) {
        self.limits = limits
        self.clock = clock
    }

    /// Takes `links` from `client`'s allowance and answers nil, or takes nothing and answers the
    /// whole seconds to wait until the allowance covers them.
    func take(_ links: Int, for client: String) -> Int? {
        guard links > 0 else { return nil }
        let now = clock()
        let capacity = Double(limits.linksPerRequest), rate = Double(limits.linksPerSecondPerClient)
        return buckets.withLock { buckets in
            if buckets.count > Self.pruneAbove {
                buckets = buckets.filter { min(capacity, $0.value.level + (now - $0.value.updated) * rate) < capacity }
            }
            var bucket = buckets[client] ?? Bucket(level: capacity, updated: now)
            bucket.level = min(capacity, bucket.level + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            let wanted = Double(links)
            if bucket.level >= wanted {
                bucket.level -= wanted
                buckets[client] = bucket
                return nil
            }
            buckets[client] = bucket
            return max(1, Int(((wanted - bucket.level) / rate).rounded(.up)))
        }
    }

    /// Client addresses with an allowance kept.
    var clients: Int { buckets.withLock { $0.count } }

    @Sendable static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
