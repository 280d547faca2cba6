import CKeyhostProcess

/// Ctrl-C for long work: keyhost's SIGINT handler asks, and loops that can run for seconds (a million addresses,
/// PBKDF2 with a huge count, a discovery step) check every few milliseconds and stop with `InterruptedError`.
public enum Interruption {
    /// Whether Ctrl-C asked running work to stop.
    public static var isRequested: Bool { khp_cancel_pending() != 0 }

    /// Throws `InterruptedError` when Ctrl-C asked running work to stop.
    @inline(__always)
    public static func check() throws {
        if khp_cancel_pending() != 0 { throw InterruptedError() }
    }
}

/// Work stopped by Ctrl-C.
public struct InterruptedError: Error, CustomStringConvertible, Equatable {
    public init() {}
    public var description: String { "interrupted" }
}
