import KeyhostServices
import LuaRuntime

/// Registers keyhost's native Lua modules (`keyhost.*`) in a state.
public enum KeyhostModules {
    /// The version `keyhost --version` prints and `require "keyhost".version` returns.
    public static let version = KeyhostVersion.text

    /// `cardReaders` are the reader sources `keyhost.card` offers besides its `"virtual"` reader (PC/SC, say).
    public static func install(in state: LuaState, cardReaders: [CardReaderSource] = []) {
        state.registerModule("keyhost") { module in
            module.value("version", .text(version))
            module.value("lua_version", .text("Lua 5.4"))
        }
        HDModule.register(in: state)
        ECModule.register(in: state)
        HashModule.register(in: state)
        AddressModule.register(in: state)
        CoinsModule.register(in: state)
        CardModule.register(in: state, readers: cardReaders)
        DiscoveryModule.register(in: state)
        TokenModule.register(in: state)
        EthModule.register(in: state)
        PSBTModule.register(in: state)
        DescriptorModule.register(in: state)
    }
}
