import ArgumentParser
import LuaRuntime

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a chunk of Lua code and print the values it returns.",
        discussion: "An expression is accepted too: 'keyhost eval 1+1' prints 2."
    )

    @Argument(help: ArgumentHelp("Lua code.", valueName: "code"))
    var code: String

    func run() throws {
        try Self.evaluate([code])
    }

    /// Evaluates each chunk in turn in one state, printing what each returns.
    static func evaluate(_ chunks: [String]) throws {
        try Failure.exitOnError {
            let state = try Host.makeState()
            let repl = try ReplSession(state: state)
            for (n, code) in chunks.enumerated() {
                switch try repl.evaluate(code, chunkName: chunks.count == 1 ? "=(command line)" : "=(command line \(n + 1))") {
                case .incomplete(let message): throw Failure.message(message)
                case .failed(let message): throw Failure.message(message)
                case .succeeded(let output): if let output { print(output) }
                }
            }
        }
    }
}
