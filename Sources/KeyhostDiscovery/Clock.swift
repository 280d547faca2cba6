import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on a clock that never goes back, for idle times.
func monotonicClock() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Sleeps `seconds` (as Thread.sleep did: a signal does not cut the wait short).
func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    let clamped = min(seconds, Double(Int32.max))
    var request = timespec(tv_sec: Int(clamped), tv_nsec: Int((clamped - clamped.rounded(.towardZero)) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
