/// The Lua program a token carries: source text, or Lua 5.4 bytecode for precompiled tokens.
public struct TokenProgram: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Lua 5.4 source, loaded in text mode.
        case luaSource = "lua54-source"
        /// A Lua 5.4 binary chunk, loaded in binary mode and only from trusted issuers.
        case luaBytecode = "lua54-bytecode"
    }

    public var kind: Kind
    public var code: [UInt8]

    public init(kind: Kind, code: [UInt8]) {
        self.kind = kind
        self.code = code
    }
}
