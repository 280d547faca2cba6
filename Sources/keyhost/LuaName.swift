import KeyhostServices

/// Lua names as the command line takes them (`-l NAME=MODULE`, `--program keyhost.cash`): ASCII
/// letters, digits and `_`, not starting with a digit; a module name is such names joined by dots.
/// The rule is the services' (Lua's `token.issue` names stdlib programs by it too).
enum LuaName {
    static func isName(_ text: some StringProtocol) -> Bool { TokenProgramSource.isName(text) }

    static func isModule(_ text: String) -> Bool { TokenProgramSource.isModuleName(text) }
}
