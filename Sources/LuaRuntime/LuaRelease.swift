import CKeyhostLua

extension LuaState {
    /// The Lua release keyhost was compiled against, e.g. "Lua 5.4.4".
    public static var release: String { String(cString: kh_lua_release()) }
}
