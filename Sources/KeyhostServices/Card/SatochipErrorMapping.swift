import KeyhostCard

extension CardServiceError {
    /// A Satochip error as a structured error: its kind, its message, the tries left for PIN and PUK failures, and the
    /// instruction (or `fallback` when the error does not name one). The messages are the client's: fixed text and
    /// status words, never a secret.
    public static func from(satochip error: SatochipError, command fallback: String?) -> CardServiceError {
        var retries: Int?
        var statusWord: StatusWord?
        var instruction: SatochipInstruction?
        switch error {
        case .wrongPIN(let n), .wrongPUK(let n): retries = n
        case .pinBlocked, .pukBlocked: retries = 0
        case .pinRequired(let ins), .setupNotDone(let ins), .notSeeded(let ins), .secureChannelRequired(let ins),
             .operationNotAllowed(let ins), .incorrectInitialization(let ins), .instructionNotSupported(let ins):
            instruction = ins
        case .secureChannelRejected(let ins, let sw), .invalidParameter(let ins, let sw), .status(let sw, let ins):
            instruction = ins
            statusWord = sw
        case .invalidResponse(let ins, _): instruction = ins
        case .notSatochip(let sw): statusWord = sw
        case .setupAlreadyDone, .alreadySeeded, .notGenuine, .invalidArgument: break
        }
        return CardServiceError(kind: error.kind, error.description, statusWord: statusWord, retriesLeft: retries,
                                command: instruction.map { "\($0)" } ?? fallback)
    }
}
