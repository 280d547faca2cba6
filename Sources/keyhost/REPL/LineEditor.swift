import CEditLine

#if canImport(Glibc)
import Glibc
#endif

/// Line input with editing, history and Tab completion, through libedit's readline interface.
final class LineEditor {
    enum Input {
        case line(String)
        case interrupted
        case endOfInput
    }

    private let historyPath: String?

    init(historyPath: String?, completer: @escaping (String) -> [String]) {
        self.historyPath = historyPath
        LineEditor.completer = completer
        rl_readline_name = UnsafePointer(strdup("keyhost"))
        // '.' and ':' are not word breaks, so "string.fo" and "obj:me" complete as a whole.
        rl_basic_word_break_characters = UnsafePointer(strdup(" \t\n\"\\'`@$><=;|&{(["))
        rl_attempted_completion_function = { text, _, _ in
            rl_completion_append_character = 0
            guard let text else { return nil }
            LineEditor.matches = LineEditor.completer?(String(cString: text)) ?? []
            LineEditor.nextMatch = 0
            return rl_completion_matches(text) { _, _ in
                guard LineEditor.nextMatch < LineEditor.matches.count else { return nil }
                defer { LineEditor.nextMatch += 1 }
                return strdup(LineEditor.matches[LineEditor.nextMatch])
            }
        }
        using_history()
        stifle_history(1000)
        if let historyPath, History.prepare(historyPath) { _ = read_history(historyPath) }
    }

    // libedit's callbacks are plain C function pointers: their state lives here.
    private static var completer: ((String) -> [String])?
    private static var matches: [String] = []
    private static var nextMatch = 0
    private static var interruptedAtPrompt: sig_atomic_t = 0

    func readLine(prompt: String) -> Input {
        LineEditor.interruptedAtPrompt = 0
        var action = sigaction()
        var previous = sigaction()
        action.__sigaction_handler.sa_handler = { _ in LineEditor.interruptedAtPrompt = 1 }
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, &previous)
        defer { sigaction(SIGINT, &previous, nil) }
        guard let raw = readline(prompt) else {
            return LineEditor.interruptedAtPrompt != 0 ? .interrupted : .endOfInput
        }
        defer { free(raw) }
        if LineEditor.interruptedAtPrompt != 0 { return .interrupted }
        return .line(String(cString: raw))
    }

    /// Adds a whole statement to the history and saves it, unless it may hold a secret.
    func record(_ statement: String) {
        guard History.shouldRecord(statement) else { return }
        add_history(statement)
        if let historyPath {
            _ = write_history(historyPath)
            chmod(historyPath, 0o600)
        }
    }
}

/// Where the REPL history lives and what never goes into it.
enum History {
    /// `$XDG_STATE_HOME/keyhost/history`, defaulting to `~/.local/state/keyhost/history`.
    static func path() -> String? {
        if let state = getenv("XDG_STATE_HOME"), state.pointee != 0 { return String(cString: state) + "/keyhost/history" }
        guard let home = getenv("HOME"), home.pointee != 0 else { return nil }
        return String(cString: home) + "/.local/state/keyhost/history"
    }

    /// Creates the folders (0700) and the file (0600); false if that is impossible.
    static func prepare(_ path: String) -> Bool {
        var folder = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            folder += "/" + component
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { return false }
        }
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        fchmod(fd, 0o600)
        close(fd)
        return true
    }

    /// Words that suggest a secret in the statement: such lines are never written to history.
    /// A leading space also keeps a line out, as in shells.
    static let secretWords = ["pin", "puk", "password", "passphrase", "mnemonic", "seed", "xprv", "tprv", "private", "secret", "words"]

    static func shouldRecord(_ statement: String) -> Bool {
        if statement.hasPrefix(" ") { return false }
        let lower = statement.lowercased()
        return !secretWords.contains { lower.contains($0) }
    }
}
