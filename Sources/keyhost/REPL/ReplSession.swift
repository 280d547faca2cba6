import LuaRuntime

/// Evaluation and completion for the REPL, done in Lua by stdlib's keyhost.repl.
struct ReplSession {
    enum Outcome: Equatable {
        case succeeded(String?)
        case incomplete(String)
        case failed(String)
    }

    let state: LuaState
    private let evalFunction: LuaReference
    private let completeFunction: LuaReference
    private let callFunction: LuaReference

    /// The modules the REPL and eval make globals, so README's snippets paste line by line.
    static let preloaded = ["hd", "ec", "hex", "card", "address", "hash"]

    init(state: LuaState, preload: Bool = true) throws {
        self.state = state
        if preload {
            let lines = ReplSession.preloaded.map { "\($0) = require 'keyhost.\($0)'" }.joined(separator: "\n")
            _ = try state.execute(lines, chunkName: "=preload")
        }
        let module = try state.execute("return require 'keyhost.repl'", chunkName: "=repl")
        guard case .table(let fields)? = module.first,
            case .reference(let eval) = fields["eval"], case .reference(let complete) = fields["complete"],
            case .reference(let call) = fields["call"]
        else { throw Failure.kind("setup", "keyhost.repl did not load; is stdlib/ installed next to keyhost?") }
        evalFunction = eval
        completeFunction = complete
        callFunction = call
    }

    func evaluate(_ source: String, chunkName: String = "=stdin") throws -> Outcome {
        let results = try state.call(evalFunction, [.text(source), .text(chunkName)])
        switch results.first?.stringValue {
        case "ok": return .succeeded(results.count > 1 ? results[1].stringValue : nil)
        case "incomplete": return .incomplete(results.count > 1 ? results[1].stringValue ?? "incomplete input" : "incomplete input")
        default: return .failed(results.count > 1 ? results[1].stringValue ?? "error" : "error")
        }
    }

    /// Runs source (an expression or statements, as `evaluate` takes it) and returns its values unformatted.
    func values(_ source: String, chunkName: String = "=stdin") throws -> Result<[LuaValue], Failure> {
        let results = try state.call(callFunction, [.text(source), .text(chunkName)])
        guard results.first?.stringValue == "ok" else {
            return .failure(.message(results.count > 1 ? results[1].stringValue ?? "error" : "error"))
        }
        return .success(Array(results.dropFirst()))
    }

    func completions(for word: String) -> [String] {
        guard let results = try? state.call(completeFunction, [.text(word)]), case .table(let list)? = results.first else { return [] }
        return list.array.compactMap(\.stringValue)
    }
}
