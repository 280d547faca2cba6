import KeyhostBindings
import KeyhostDiscovery
import LuaRuntime

/// `discover --source lua:SCRIPT`: usage answered by the function the script returns, the one part of
/// `discover` that runs Lua (and so the one discovery file that imports the binding).
enum LuaUsageFunction {
    /// A usage source calling the script's function with each batch of addresses; the Lua state lives as long
    /// as the source.
    static func source(script path: String) throws -> UsageSource {
        let bytes: [UInt8]
        do { bytes = try SourceFile.read(path) } catch { throw Failure.kind("io", "--source lua: cannot read the script \(error)") }
        let state = try Host.makeState()
        let results = try state.execute(bytes: SourceFile.strippingShebang(bytes), chunkName: "@" + path)
        guard case .reference(let function) = results.first ?? .nil, function.typeName == "function" else {
            throw Failure.kind("lua_error", "--source lua:\(path) must return a function(addresses) -> list of booleans; it returned "
                + (results.first?.typeName ?? "nothing"))
        }
        return ClosureUsageSource(name: "lua \(path)") { addresses in
            let results = try state.call(function, [.table(LuaTable(array: addresses.map { .text($0) }))])
            return try UsageAnswer.flags(results.first ?? .nil, for: addresses, allowSet: false)
        }
    }
}
