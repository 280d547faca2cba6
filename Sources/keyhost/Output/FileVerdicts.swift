import KeyhostRecord

/// The verdicts of a command that judges many files (`token verify-receipt`, `verify-proof`): each file's fields,
/// with its name when there are several, and one bad file reported in its place without hiding the others'.
/// Nothing that stops every file (Ctrl-C, a verifier that could not run) is caught here.
struct FileVerdicts {
    let json: Bool
    /// How many files the command judges.
    let count: Int
    private(set) var results: [Record] = []
    /// Whether some file was not valid, or could not be judged.
    private(set) var failed = false

    init(json: Bool, count: Int) {
        self.json = json
        self.count = count
    }

    /// Judges `file` with `check`: whether it is valid, and what to print of it.
    mutating func judge(_ file: String, _ check: () throws -> (valid: Bool, fields: [(String, Record)])) throws {
        do {
            let (valid, fields) = try check()
            if !valid { failed = true }
            results.append(.object((count > 1 ? [("file", .string(file))] : []) + fields))
        } catch where count > 1 && Failure.isOneFiles(error) {
            failed = true
            if json {
                guard case .object(let fields)? = ErrorJSON.record(for: error)["error"] else { return }
                results.append(.object([("file", .string(file)), ("valid", .bool(false)), ("error", .object(fields))]))
            } else {
                Failure.report(error)
            }
        }
    }

    /// With --json, one document: the file's fields, or `{results: [...]}` for several.
    func printJSON() {
        guard json, !results.isEmpty else { return }
        print((count == 1 ? results[0] : Record.object([("results", .array(results))])).json())
    }
}
