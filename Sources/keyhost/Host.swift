import KeyhostBindings
import KeyhostServices
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// Builds the Lua state every command uses: keyhost's modules and search roots.
enum Host {
    static func makeState(profile: LuaProfile = .full) throws -> LuaState {
        let state = try LuaState(profile: profile)
        guard profile == .full else { return state }
        KeyhostModules.install(in: state, cardReaders: [PCSCReaders()])
        // The binding benchmark's module (scripts/bench sets the variable); no other state carries it.
        if getenv("KEYHOST_BENCH") != nil { state.registerBenchmarkModule() }
        if let extra = getenv("KEYHOST_PATH").map({ String(cString: $0) }) {
            for directory in extra.split(separator: ":") where !directory.isEmpty {
                try state.addSearchRoot(String(directory))
            }
        }
        if let stdlib = Stdlib.directory {
            try state.addSearchRoot(stdlib, chunkPrefix: "stdlib")
        }
        return state
    }
}

/// The Lua modules shipped in stdlib/, found by the services (token programs by name use it too).
typealias Stdlib = KeyhostStdlib
