import ArgumentParser
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The one place that turns errors into text on standard error and an exit status.
enum Failure: Error, CustomStringConvertible {
    /// A complete message for the user, printed after "keyhost: ".
    case message(String)

    /// The message alone: a Failure wrapped by another layer (the discovery engine names its source and
    /// interpolates the error) must read as the message, never as `message("…")`.
    var description: String {
        switch self {
        case .message(let text): return text
        }
    }

    static func exitOnError(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ExitCode {
            throw error
        } catch {
            report(error)
            throw ExitCode(1)
        }
    }

    static func report(_ error: Error) {
        let text: String
        switch error {
        case Failure.message(let message): text = message
        case let error as LuaError: text = error.description
        default: text = String(describing: error)
        }
        writeError("keyhost: " + text + "\n")
    }

    static func writeError(_ text: String) {
        fflush(stdout) // keep results and errors in the order they happened
        fputs(text, stderr)
    }
}
