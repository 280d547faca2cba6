/// The EXAMPLES paragraph of a command's `--help` (and so of its man page): real command lines, each one a
/// user can paste. Tests/e2e/test_help_examples.py runs the ones that need no network and no real card.
///
/// The parser wraps help text at the terminal's width (80 columns off a terminal), breaking a long line at any
/// space, which would leave a line that cannot be pasted. So each example is laid out here to fit: a trailing
/// `# comment` goes on a line of its own above the command, and a long command is continued with ` \` at a space
/// outside quotes and `$(…)`, as a shell reads it.
enum HelpExamples {
    /// Room on a line: 80 columns, less the two spaces of indent and the " \" of a continuation.
    static let width = 76

    /// "Examples:" and the lines, laid out; joined to a discussion with `discussion + "\n" + text(…)`.
    static func text(_ lines: String...) -> String {
        "Examples:\n" + lines.flatMap(layout).map { "  " + $0 }.joined(separator: "\n")
    }

    static func layout(_ example: String) -> [String] {
        var command = example
        var out: [String] = []
        if let hash = breakPoints(example, comment: true).first {
            out.append(String(example[hash...]))
            command = String(example[..<hash]).trimmingTrailingSpaces()
        }
        var rest = command
        var indent = ""
        while indent.count + rest.count > width {
            let room = width - indent.count - 2
            let points = breakPoints(rest, comment: false).filter { rest.distance(from: rest.startIndex, to: $0) <= room }
            guard let cut = points.last, cut > rest.startIndex else { break }
            out.append(indent + rest[..<cut] + " \\")
            rest = String(rest[cut...].drop(while: { $0 == " " }))
            indent = "    "
        }
        out.append(indent + rest)
        return out
    }

    /// The spaces outside quotes and `$(…)` (where a line may be continued), or with `comment` the start of a
    /// trailing `# comment` (a `#` after a space, outside quotes).
    static func breakPoints(_ text: String, comment: Bool) -> [String.Index] {
        var points: [String.Index] = []
        var quote: Character?
        var depth = 0
        var previous: Character = " "
        for index in text.indices {
            let c = text[index]
            defer { previous = c }
            if let open = quote {
                if c == open && open == "'" { quote = nil }
                else if c == open && previous != "\\" { quote = nil }
                if c == "(" && previous == "$" { depth += 1 } else if c == ")" && depth > 0 { depth -= 1 }
                continue
            }
            if c == "'" || c == "\"" { quote = c; continue }
            if c == "(" && previous == "$" { depth += 1; continue }
            if c == ")" && depth > 0 { depth -= 1; continue }
            guard depth == 0 else { continue }
            if comment { if c == "#" && previous == " " { return [index] } } else if c == " " && previous != " " { points.append(index) }
        }
        return comment ? [] : points
    }
}

private extension String {
    func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
