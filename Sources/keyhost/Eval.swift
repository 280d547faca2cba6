import ArgumentParser
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Run a chunk of Lua code and print the values it returns.",
        discussion: """
            An expression is accepted too: 'keyhost eval 1+1' prints 2. As at the REPL prompt, hd, ec, hex, card, \
            address and hash are globals, and strings that are not text print as <32 bytes 73c5da0a…> \
            (hex(x) gives all of it); --raw writes the returned values as io.write would, for pipes.
            """
            + "\n" + HelpExamples.text(
                "keyhost eval 1+1",
                "keyhost eval 'return hex.encode(hash.sha256(\"abc\"))'",
                "keyhost eval --raw '\"no quotes\\n\"'")
    )

    @Argument(help: ArgumentHelp("Lua code.", valueName: "code"))
    var code: String

    @Flag(help: "Write the returned strings' bytes as they are (numbers as text), with no separator or newline.")
    var raw = false

    func run() throws {
        try Self.evaluate([code], raw: raw)
    }

    /// Evaluates each chunk in turn in one state, printing what each returns. Ctrl-C raises "interrupted"
    /// in the code, as in `keyhost run`: its `<close>` variables and handlers run; left uncaught, it ends
    /// keyhost with status 130. `raw` takes expressions too, as the REPL does.
    static func evaluate(_ chunks: [String], raw: Bool = false) throws {
        try Failure.exitOnError {
            let state = try Host.makeState()
            let repl = try ReplSession(state: state)
            try state.interruptOnSIGINT {
                for (n, code) in chunks.enumerated() {
                    let name = chunks.count == 1 ? "=(command line)" : "=(command line \(n + 1))"
                    if raw {
                        let values = try repl.values(code, chunkName: name)
                        if case .failure = values, state.wasInterrupted { throw LuaError.interrupted }
                        try writeRaw(try values.get())
                        continue
                    }
                    let outcome = try repl.evaluate(code, chunkName: name)
                    // Uncaught, Ctrl-C ends keyhost as it ends `keyhost run`; caught, the code goes on.
                    if case .failed = outcome, state.wasInterrupted { throw LuaError.interrupted }
                    switch outcome {
                    case .incomplete(let message): throw Failure.kind("syntax", message)
                    case .failed(let message): throw Failure.kind("lua_error", message)
                    case .succeeded(let output): if let output { print(output) }
                    }
                }
            }
        }
    }

    private static func writeRaw(_ values: [LuaValue]) throws {
        for value in values {
            let bytes: [UInt8]
            switch value {
            case .string(let b): bytes = b
            case .integer(let i): bytes = Array(String(i).utf8)
            case .number(let d): bytes = Array("\(d)".utf8)
            default: throw Failure.kind("unsupported", "--raw writes strings and numbers only; the code returned a \(value.typeName)")
            }
            _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, stdout) }
        }
        fflush(stdout)
    }
}
