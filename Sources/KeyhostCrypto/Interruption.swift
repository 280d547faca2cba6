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

    /// Runs `body` with Ctrl-C asking work to stop (`isRequested` turns true) instead of ending the process:
    /// keyhost's one SIGINT handler, which a Lua state also uses (`LuaState.interruptOnSIGINT`). A second
    /// Ctrl-C before the first was noticed ends the process with 130, and system calls the signal lands in
    /// go on (SA_RESTART) so that work stops at its own next check. At a prompt (`atPrompt`) neither: Ctrl-C
    /// ends the blocked read and only drops the line. The request is cleared on the way in and out: read it
    /// inside `body`.
    public static func whileRunning<T>(atPrompt: Bool = false, _ body: () throws -> T) rethrows -> T {
        khp_interrupt_begin(atPrompt ? 0 : KHP_INTERRUPT_SECOND_EXITS | KHP_INTERRUPT_RESTART, nil, nil)
        defer { khp_interrupt_end() }
        return try body()
    }
}

/// Work stopped by Ctrl-C (not a failure of what it was doing: reports say `interrupted`).
public struct InterruptedError: Error, CustomStringConvertible, Equatable {
    public init() {}
    public var description: String { "interrupted" }
}
