/// APDU bytes that cannot be encoded or parsed.
public enum APDUError: Error, Equatable, CustomStringConvertible {
    /// A command data field longer than extended APDUs allow (65 535 bytes).
    case dataTooLong(Int, maximum: Int)
    /// An expected response length Le outside 0...65 536.
    case expectedLengthOutOfRange(Int)
    /// Bytes too short to hold a command header or a status word.
    case truncated(Int, needed: Int)
    /// A command whose length bytes disagree with its size.
    case malformedCommand(String)

    public var description: String {
        switch self {
        case .dataTooLong(let n, let maximum): return "APDU data of \(n) bytes; at most \(maximum) fit"
        case .expectedLengthOutOfRange(let n): return "expected response length \(n) is outside 0...65536"
        case .truncated(let n, let needed): return "APDU of \(n) bytes is truncated; at least \(needed) needed"
        case .malformedCommand(let why): return "malformed command APDU: \(why)"
        }
    }
}
