import Foundation
import Testing

/// Swift must never call a Lua API function that can raise (manual §4.4 tags 'e' and 'v');
/// those run in CKeyhostLua under lua_pcall. This scan keeps a slip from landing.
@Suite struct LongjmpSafetyTests {
    static let raising = [
        "lua_error", "luaL_error", "lua_gettable", "lua_getfield", "lua_geti", "lua_getglobal",
        "lua_settable", "lua_setfield", "lua_seti", "lua_setglobal", "lua_call", "lua_callk",
        "lua_next", "lua_len", "luaL_len", "lua_concat", "lua_arith", "lua_compare",
        "luaL_tolstring", "luaL_callmeta", "luaL_requiref", "luaL_openlibs", "luaL_dostring",
        "luaL_dofile", "luaL_newlib", "luaL_setfuncs", "luaL_getsubtable", "luaL_checkudata",
        "luaL_argerror", "luaL_typeerror", "lua_yield", "lua_yieldk", "lua_closeslot",
        "luaL_checkinteger", "luaL_checknumber", "luaL_checklstring", "luaL_checktype",
        "luaL_checkany", "luaL_checkstack", "luaL_checkoption", "luaL_optinteger",
        "luaL_optnumber", "luaL_optlstring", "luaL_execresult", "luaL_fileresult",
    ]

    static var sourcesRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
    }

    static func swiftFiles(in folder: String) throws -> [URL] {
        let root = sourcesRoot.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    @Test func runtimeCallsNoRaisingLuaAPI() throws {
        let files = try Self.swiftFiles(in: "LuaRuntime")
        #expect(files.count >= 5)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for name in Self.raising {
                let pattern = "\\b\(name)\\s*\\("
                let found = text.range(of: pattern, options: .regularExpression)
                #expect(found == nil, "\(file.lastPathComponent) calls \(name), which can raise through Swift frames")
            }
        }
    }

    @Test func onlyTheRuntimeImportsLua() throws {
        for folder in ["KeyhostBindings", "keyhost"] {
            for file in try Self.swiftFiles(in: folder) {
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("import CLua"), "\(file.lastPathComponent) must use LuaRuntime, not the C API")
                #expect(!text.contains("import CKeyhostLua"), "\(file.lastPathComponent) must use LuaRuntime, not the C API")
            }
        }
    }
}
