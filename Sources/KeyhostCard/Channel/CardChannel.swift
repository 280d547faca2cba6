/// A transport to one card: sends a command APDU and returns the card's answer.
///
/// Implementations: PC/SC readers (later), `SoftKeycard` in process, `RecordingChannel`, `ReplayChannel`.
public protocol CardChannel: AnyObject {
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU
}

/// Transport failures (not card answers).
public enum CardChannelError: Error, Equatable, CustomStringConvertible {
    /// The card went away (removed, reset, or a simulated drop).
    case connectionLost
    /// A replayed session received a command other than the recorded one.
    case replayMismatch(exchange: Int, expected: String, got: String)
    /// A replayed session has no more recorded exchanges.
    case replayExhausted(got: String)
    /// A transcript line that cannot be read.
    case badTranscript(line: Int, reason: String)

    public var description: String {
        switch self {
        case .connectionLost: return "connection to the card was lost"
        case .replayMismatch(let exchange, let expected, let got):
            return "replay exchange \(exchange) expects command \(expected), got \(got)"
        case .replayExhausted(let got): return "replay transcript has no exchange left for command \(got)"
        case .badTranscript(let line, let reason): return "transcript line \(line): \(reason)"
        }
    }
}
