import CEditLine
import KeyhostCrypto
import KeyhostFiles

#if canImport(Glibc)
import Glibc
#endif

/// Line input with editing, history and Tab completion, through libedit's native (wide-character) API.
///
/// Not the readline compatibility layer: Debian's libedit writes into freed memory when its `rl_complete`
/// runs after a line longer than about 3 KB (issue 9, B8). Completion is keyhost's own editor command bound
/// to Tab, which reads the line with `el_wline` and inserts with `el_winsertstr`, so no narrow-character
/// conversion buffer is involved.
final class LineEditor {
    enum Input {
        case line(String)
        case interrupted
        case endOfInput
    }

    private let historyPath: String?
    private let editor: OpaquePointer
    private let history: OpaquePointer

    init(historyPath: String?, completer: @escaping (String) -> [String]) {
        self.historyPath = historyPath
        LineEditor.completer = completer
        editor = kh_el_init("keyhost")
        history = history_winit()
        kh_history_set_size(history, 1000)
        kh_el_set_history(editor, history)
        kh_el_set_editor(editor, LineEditor.wide("emacs"))
        // libedit restores the terminal and passes signals on to keyhost's handlers (Ctrl-C at the prompt).
        kh_el_set_signal(editor, 1)
        kh_el_set_prompt(editor) { _ in LineEditor.promptBuffer }
        // libedit keeps the name and help pointers of an added function: they live as long as the
        // editor and are freed after el_end.
        kh_el_add_function(editor, functionName, functionHelp, { editor, _ in LineEditor.complete(editor) })
        kh_el_bind(editor, LineEditor.wide("^I"), LineEditor.wide("keyhost-complete"))
        // The keys people expect from readline.
        for (key, command) in [("^R", "em-inc-search-prev"), ("^L", "ed-clear-screen"), ("\\e[1~", "ed-move-to-beg"), ("\\e[4~", "ed-move-to-end"),
                               ("\\e[H", "ed-move-to-beg"), ("\\e[F", "ed-move-to-end"), ("\\e[3~", "ed-delete-next-char")] {
            kh_el_bind(editor, LineEditor.wide(key), LineEditor.wide(command))
        }
        el_source(editor, nil)  // ~/.editrc, as other libedit programs do
        if let historyPath {
            if let problem = History.prepare(historyPath) {
                saveFailed = true
                LineEditor.warn("history is not saved this session: \(historyPath): \(problem)")
            } else {
                History.load(historyPath, into: history)
            }
        } else {
            saveFailed = true
            LineEditor.warn("history is not saved this session: neither XDG_STATE_HOME nor HOME is set")
        }
    }

    /// Whether saving the history already failed (warned once, not at every line).
    private var saveFailed = false

    static func warn(_ text: String) { Failure.writeError("keyhost: warning: " + text + "\n") }

    deinit {
        el_end(editor)
        history_wend(history)
        functionName.deallocate()
        functionHelp.deallocate()
    }

    /// The completion function's name and help, which libedit points to until el_end.
    private let functionName = LineEditor.wideCopy("keyhost-complete")
    private let functionHelp = LineEditor.wideCopy("Complete a Lua name")

    // libedit's callbacks are plain C function pointers: their state lives here.
    private static var completer: ((String) -> [String])?
    private static var promptBuffer: UnsafeMutablePointer<wchar_t> = wideCopy("> ")

    func readLine(prompt: String) -> Input {
        LineEditor.promptBuffer.deallocate()
        LineEditor.promptBuffer = LineEditor.wideCopy(prompt)
        // Ctrl-C at the prompt drops the line (keyhost's one SIGINT handler, which never ends the REPL here).
        return Interruption.whileRunning(atPrompt: true) { () -> Input in
            // The terminal goes into libedit's mode before the prompt is drawn: el_wgets draws it first, and
            // a Ctrl-D typed between the prompt and the mode switch was lost with the cooked line it ended.
            _ = kh_el_prep_term(editor, 1)
            var count: Int32 = 0
            guard let raw = el_wgets(editor, &count), count > 0 else {
                return Interruption.isRequested ? .interrupted : .endOfInput
            }
            if Interruption.isRequested { return .interrupted }
            var line = LineEditor.string(raw, count: Int(count))
            if line.hasSuffix("\n") { line.removeLast() }
            return .line(line)
        }
    }

    /// Adds a whole statement to the history and saves it, unless it may hold a secret.
    func record(_ statement: String) {
        guard History.shouldRecord(statement) else { return }
        LineEditor.wide(statement).withUnsafeBufferPointer { _ = kh_history_enter(history, $0.baseAddress) }
        if let historyPath, !saveFailed {
            if kh_history_save(history, historyPath) < 0 {
                saveFailed = true
                LineEditor.warn("could not save the history to \(historyPath); later lines of this session are not saved")
            }
            chmod(historyPath, 0o600)
        }
    }

    // MARK: - Completion

    /// Characters that end the word being completed; '.' and ':' are not among them, so "string.fo" and
    /// "obj:me" complete as a whole.
    private static let wordBreaks = Set(" \t\n\"\\'`@$><=;|&{([,+-*/%^~#)]}".unicodeScalars)

    /// The Tab command: completes the word before the cursor, or lists the candidates when they share no
    /// longer prefix.
    private static func complete(_ editor: OpaquePointer?) -> UInt8 {
        guard let editor, let info = el_wline(editor), let completer else { return UInt8(CC_ERROR) }
        let before = string(info.pointee.buffer, count: info.pointee.cursor - info.pointee.buffer)
        var word = ""
        for scalar in before.unicodeScalars.reversed() {
            if wordBreaks.contains(scalar) { break }
            word.unicodeScalars.insert(scalar, at: word.unicodeScalars.startIndex)
        }
        let matches = completer(word)
        guard !matches.isEmpty else { return UInt8(CC_ERROR) }
        let common = matches.dropFirst().reduce(matches[0]) { commonPrefix($0, $1) }
        if common.unicodeScalars.count > word.unicodeScalars.count {
            let suffix = String(String.UnicodeScalarView(common.unicodeScalars.dropFirst(word.unicodeScalars.count)))
            _ = wide(suffix).withUnsafeBufferPointer { el_winsertstr(editor, $0.baseAddress) }
            return UInt8(CC_REFRESH)
        }
        guard matches.count > 1 else { return UInt8(CC_REFRESH) }
        fputs("\n" + columns(matches) + "\n", stdout)
        fflush(stdout)
        return UInt8(CC_REDISPLAY)
    }

    private static func commonPrefix(_ a: String, _ b: String) -> String {
        var out = String.UnicodeScalarView()
        for (x, y) in zip(a.unicodeScalars, b.unicodeScalars) {
            guard x == y else { break }
            out.append(x)
        }
        return String(out)
    }

    /// Candidates in rows of columns, 80 characters wide at most.
    private static func columns(_ names: [String]) -> String {
        let width = (names.map(\.count).max() ?? 0) + 2
        let perRow = max(1, 80 / width)
        return stride(from: 0, to: names.count, by: perRow).map { start in
            names[start..<min(start + perRow, names.count)].map { $0.padding(width) }.joined()
        }.joined(separator: "\n")
    }

    // MARK: - Wide strings (wchar_t is a UTF-32 code point on Linux)

    static func wide(_ text: String) -> [wchar_t] {
        text.unicodeScalars.map { wchar_t(bitPattern: $0.value) } + [0]
    }

    static func wideCopy(_ text: String) -> UnsafeMutablePointer<wchar_t> {
        let chars = wide(text)
        let buffer = UnsafeMutablePointer<wchar_t>.allocate(capacity: chars.count)
        buffer.initialize(from: chars, count: chars.count)
        return buffer
    }

    static func string(_ chars: UnsafePointer<wchar_t>, count: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for i in 0..<max(0, count) {
            scalars.append(Unicode.Scalar(UInt32(bitPattern: chars[i])) ?? "\u{FFFD}")
        }
        return String(scalars)
    }
}

/// Where the REPL history lives and what never goes into it.
enum History {
    /// `history` in keyhost's state folder (`StateDirectory`).
    static func path() -> String? {
        StateDirectory.path().map { $0 + "/history" }
    }

    /// Creates the folders (0700) and the file (0600); what went wrong if that is impossible, else nil. The
    /// history's own folder is made 0700 even when it already existed with a wider mode.
    static func prepare(_ path: String) -> String? {
        func problem(_ what: String) -> String { "\(what): \(String(cString: strerror(errno)))" }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if let failed = StateDirectory.create(folder) { return failed }
        guard chmod(folder, 0o700) == 0 else { return problem("cannot make \(folder) private") }
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return problem("cannot open it for writing") }
        fchmod(fd, 0o600)
        close(fd)
        return nil
    }

    /// Loads the saved history (the file libedit writes), leaving out, and removing from the file, any entry
    /// that looks secret now (an older keyhost saved more).
    static func load(_ path: String, into history: OpaquePointer) {
        guard let saved = history_winit() else { return }
        defer { history_wend(saved) }
        kh_history_set_size(saved, 1000)
        guard kh_history_load(saved, path) >= 0 else { return }
        var dropped = false
        var entry = kh_history_step(saved, 1)
        while let text = entry {
            let statement = LineEditor.string(text, count: wcslen(text))
            if shouldRecord(statement) {
                kh_history_enter(history, text)
            } else {
                dropped = true
            }
            entry = kh_history_step(saved, 0)
        }
        if dropped {
            _ = kh_history_save(history, path)
            chmod(path, 0o600)
        }
    }

    /// Whether a statement may be saved: not when it starts with a space (as in shells) or when
    /// `SecretDetector` finds a secret in it by content or by name.
    static func shouldRecord(_ statement: String) -> Bool {
        !statement.hasPrefix(" ") && !SecretDetector.containsSecret(statement)
    }
}
