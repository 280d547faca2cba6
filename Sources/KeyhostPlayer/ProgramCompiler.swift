import KeyhostTokens
import LuaRuntime

/// Compile-checks a token program before it is issued: a token that can never run is a mistake
/// best caught by the issuer. Shared by `keyhost token issue` and `keyhost.token.issue`.
public enum ProgramCompiler {
    /// Compiles `code` (Lua source) in a fresh state; returns its bytecode (`string.dump`) when
    /// `dump` is true, else an empty array. Throws `TokenError` of kind `syntax`.
    public static func compile(_ code: [UInt8], chunkName: String, dump: Bool) throws -> [UInt8] {
        let state = try LuaState()
        let results: [LuaValue]
        do {
            results = try state.execute(
                "local source, name, dump = ... local f, err = load(source, name, 't') if not f then error(err, 0) end return dump and string.dump(f) or ''",
                chunkName: "=compile", arguments: [.string(code), .text(chunkName), .boolean(dump)]
            )
        } catch let error as LuaError {
            throw TokenError("syntax", "the program does not compile: \(error.description.split(separator: "\n").first ?? "")")
        }
        guard case .string(let bytes)? = results.first else { throw TokenError("syntax", "the program could not be compiled") }
        return bytes
    }
}
