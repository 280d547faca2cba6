import ArgumentParser
import KeyhostRecord
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The one place that turns errors into text on standard error and an exit status.
///
/// With `--json` the same errors are one JSON object on standard error, `{"error": {"kind": …, "message": …}}`,
/// whose `kind` is the one Lua's structured errors carry (`wrong_pin`, `no_reader`, …), plus `usage` for a
/// bad command line and `failed` for everything without a finer kind. docs/json.md lists them.
enum Failure: Error, CustomStringConvertible {
    /// A complete message for the user, printed after "keyhost: ".
    case message(String)
    /// A message with a machine-readable kind for `--json` ("not_found", "usage", …).
    case kind(String, String)

    /// The message alone: a Failure wrapped by another layer (the discovery engine names its source and
    /// interpolates the error) must read as the message, never as `message("…")`.
    var description: String {
        switch self {
        case .message(let text), .kind(_, let text): return text
        }
    }

    /// Whether errors are reported as JSON: set once, from `--json` on the command line.
    nonisolated(unsafe) static var json = false

    /// Runs a command's body: malformed input found only while running (a ValidationError, e.g. a job file's
    /// bad line or --hex text read from a file) keeps status 64 and the "usage" kind, as in `validate()`, but
    /// without a usage line that would not fit; a verdict already printed (ExitCode) passes through; a verifier
    /// that could not re-run a program is 75; Ctrl-C in Lua is 130; everything else is reported and exits 1.
    static func exitOnError(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ValidationError {
            report(Failure.kind("usage", error.message))
            throw ExitCode(64)
        } catch let error as ExitCode {
            throw error
        } catch let error as StructuredError where error.errorKind == "verifier_unavailable" {
            // The chain was not judged (the verifier's own worker failed): EX_TEMPFAIL, so a script retries
            // rather than drop a payment or deposit that may be valid.
            report(error)
            throw ExitCode(75)
        } catch LuaError.interrupted {
            report(LuaError.interrupted)
            throw ExitCode(130)  // as a shell reports a command Ctrl-C ended
        } catch {
            report(error)
            throw ExitCode(1)
        }
    }

    /// Whether a command that checks many files reports `error` in the file's place and goes on: not when nothing
    /// could be judged (the verifier's worker failed, 75: the whole run is to be retried) or on Ctrl-C.
    static func isOneFiles(_ error: Error) -> Bool {
        if error is ExitCode { return false }
        if case LuaError.interrupted = error { return false }
        return (error as? StructuredError)?.errorKind != "verifier_unavailable"
    }

    static func report(_ error: Error) {
        if json {
            writeError(ErrorJSON.document(for: error) + "\n")
            return
        }
        let text: String
        switch error {
        case let error as Failure: text = error.description
        case let error as LuaError: text = error.description
        default: text = String(describing: error)
        }
        writeError("keyhost: " + text + "\n")
    }

    /// Writes `text` to standard error, its control characters but LF and TAB escaped (`TerminalText`): error
    /// messages and notes quote what users, files, cards and servers said, and none of it may steer the terminal.
    static func writeError(_ text: String) {
        fflush(stdout) // keep results and errors in the order they happened
        fputs(TerminalText.escaped(text, keepingLineBreaks: true), stderr)
    }
}
