/// Why running Lua code failed.
public enum LuaError: Error, CustomStringConvertible, Equatable {
    /// The chunk does not compile; the message has Lua's `chunk:line:` prefix.
    case syntax(String)
    /// A raised error, rendered with its traceback when one was taken.
    case runtime(String)
    /// The state's memory cap refused an allocation.
    case memoryLimit(bytes: Int)
    /// The sandbox's instruction budget ran out.
    case instructionBudget(UInt64)
    /// The sandbox's wall-clock limit passed.
    case timeLimit(seconds: Double)
    /// Ctrl-C stopped the running code.
    case interrupted
    /// The state could not be created or set up.
    case setup(String)

    public var description: String {
        switch self {
        case .syntax(let m), .runtime(let m), .setup(let m): return m
        case .memoryLimit(let bytes): return "sandbox: memory limit of \(bytes) bytes exceeded"
        case .instructionBudget(let n): return "sandbox: instruction budget of \(n) instructions exceeded"
        case .timeLimit(let s): return "sandbox: time limit of \(s) seconds exceeded"
        case .interrupted: return "interrupted"
        }
    }
}

/// Thrown by a binding for a bad argument; Lua reports it as `bad argument #n to 'f' (message)`.
public struct LuaArgumentError: Error, CustomStringConvertible {
    public let position: Int32
    public let message: String
    public init(_ position: Int32, _ message: String) {
        self.position = position
        self.message = message
    }
    public var description: String { "bad argument #\(position) (\(message))" }
}

/// An error raised in Lua code called from a binding; rethrown to Lua unchanged (tables and all).
public struct LuaRaisedError: Error, CustomStringConvertible {
    /// The error object as Lua raised it.
    public let value: LuaReference?
    /// `tostring` of the error object.
    public let message: String
    public var description: String { message }
}

/// A Swift error that means Ctrl-C stopped the call: Lua sees it as the count hook's "interrupted", and the REPL
/// and `keyhost run` report it as `LuaError.interrupted`.
public protocol LuaInterruption: Error {}

/// A Swift error that becomes a structured Lua error object (a table with fields and a readable `tostring`).
public protocol LuaErrorConvertible: Error {
    /// Extra fields for the error table (`message` is added from `description`).
    var luaErrorFields: LuaTable { get }
}
