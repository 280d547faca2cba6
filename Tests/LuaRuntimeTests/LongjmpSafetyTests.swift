import Foundation
import Testing

/// Swift must never call a Lua API function that can raise (manual §4.4 tags 'e' and 'v'); those
/// run in CKeyhostLua under lua_pcall. These scans keep a slip from landing: the Swift runtime may
/// call only functions on an allow-list, and so may every C function that Swift calls directly.
@Suite struct LongjmpSafetyTests {
    /// API functions that cannot raise ('-'), or can raise only a memory error ('m'), which the
    /// allocator never does while Swift runs. Each was checked against the manual's tag.
    static let nonRaising: Set<String> = [
        "lua_absindex", "lua_checkstack", "lua_close", "lua_createtable", "lua_getmetatable", "lua_gettop",
        "lua_isinteger", "lua_isnumber", "lua_isstring", "lua_pushboolean", "lua_pushinteger", "lua_pushlstring",
        "lua_pushnil", "lua_pushnumber", "lua_pushstring", "lua_pushvalue", "lua_pushcclosure", "lua_pushliteral",
        "lua_pushcfunction", "lua_pushlightuserdata", "lua_rawget", "lua_rawgeti", "lua_rawlen", "lua_rawset",
        "lua_rawseti", "lua_rawequal", "lua_setmetatable", "lua_setupvalue", "lua_toboolean", "lua_tointegerx",
        "lua_tolstring", "lua_tonumberx", "lua_topointer", "lua_touserdata", "lua_tocfunction", "lua_type",
        "lua_typename", "lua_newuserdatauv", "lua_rotate", "lua_insert", "lua_remove", "lua_pop", "lua_sethook",
        "lua_getallocf", "lua_newstate", "lua_atpanic", "lua_setwarnf", "lua_pcall", "lua_pcallk",
        "luaL_ref", "luaL_unref", "luaL_where", "luaL_loadbufferx", "luaL_traceback", "lua_upvalueindex",
        "lua_tostring", "lua_isboolean", "lua_isnoneornil", "lua_tointeger",
        // '–' in the manual: lua_dump writes through the caller's writer and allocates no Lua object.
        "lua_isfunction", "lua_dump",
        // '–' in the manual: NULL when it cannot allocate (kh_compile's state of its own).
        "luaL_newstate",
        // Tagged 'e' because it may close to-be-closed slots; keyhost never creates any from C or
        // Swift (no lua_toclose), so the slots it drops are plain values.
        "lua_settop",
    ]

    static var sourcesRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
    }

    static func files(in folder: String, extension ext: String) throws -> [URL] {
        let root = sourcesRoot.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == ext }
    }

    /// Every `lua_…(` / `luaL_…(` called in `text`.
    static func apiCalls(in text: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: "\\b(luaL?_[a-z_]+)\\s*\\(")
        let range = NSRange(text.startIndex..., in: text)
        return Set(regex.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    @Test func swiftRuntimeCallsOnlyNonRaisingLuaAPI() throws {
        let files = try Self.files(in: "LuaRuntime", extension: "swift")
        #expect(files.count >= 5)
        for file in files {
            let calls = Self.apiCalls(in: try String(contentsOf: file, encoding: .utf8))
            for name in calls.subtracting(Self.nonRaising).sorted() {
                Issue.record("\(file.lastPathComponent) calls \(name), which is not on the non-raising list")
            }
        }
    }

    /// The C functions of CKeyhostLua with their bodies (a brace matcher is enough for this file's style).
    static func cFunctions() throws -> [String: (signature: String, body: String)] {
        var result: [String: (String, String)] = [:]
        for file in try files(in: "CKeyhostLua", extension: "c") {
            let text = try String(contentsOf: file, encoding: .utf8)
            let regex = try NSRegularExpression(pattern: "^(?:static )?[A-Za-z_][A-Za-z0-9_ \\*]*?\\b([a-z_][a-z0-9_]*)\\(([^;{]*)\\)\\s*\\{", options: [.anchorsMatchLines])
            let ns = text as NSString
            for match in regex.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
                let name = ns.substring(with: match.range(at: 1))
                var depth = 0
                var end = match.range.location + match.range.length - 1
                repeat {
                    let c = ns.character(at: end)
                    if c == 123 { depth += 1 } else if c == 125 { depth -= 1 }
                    end += 1
                } while depth > 0 && end < ns.length
                let body = ns.substring(with: NSRange(location: match.range.location, length: end - match.range.location))
                result[name] = (ns.substring(with: match.range), body)
            }
        }
        return result
    }

    /// Functions declared in CKeyhostLua.h are what Swift calls. Those that Swift calls directly
    /// (not the lua_CFunctions and hooks that only Lua calls) must raise nothing, and neither may any
    /// static function they call in turn; functions run under lua_pcall (passed as values) are exempt.
    @Test func cHelpersCalledFromSwiftDoNotRaise() throws {
        let header = try String(contentsOf: Self.sourcesRoot.appendingPathComponent("CKeyhostLua/include/CKeyhostLua.h"), encoding: .utf8)
        let functions = try Self.cFunctions()
        let onlyLuaCalls: Set<String> = ["kh_msghandler"] // a lua_CFunction exported for the REPL's pcall
        let exported = functions.keys.filter { name in
            !onlyLuaCalls.contains(name) && header.range(of: "\\b\(name)\\(", options: .regularExpression) != nil
        }
        #expect(exported.count >= 20)
        #expect(exported.contains("kh_push_object") && exported.contains("kh_to_object") && exported.contains("kh_load"))

        let callRegex = try NSRegularExpression(pattern: "\\b([A-Za-z_][A-Za-z0-9_]*)\\s*\\(")
        func directCalls(_ body: String) -> Set<String> {
            let ns = body as NSString
            return Set(callRegex.matches(in: body, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) })
        }
        for name in exported.sorted() {
            var pending = [name], seen: Set<String> = []
            while let current = pending.popLast() {
                guard seen.insert(current).inserted, let body = functions[current]?.body else { continue }
                let calls = directCalls(body).subtracting([current])
                for api in calls.filter({ $0.hasPrefix("lua_") || $0.hasPrefix("luaL_") }) where !Self.nonRaising.contains(api) {
                    Issue.record("\(name) (through \(current)) calls \(api), which can raise through the Swift frame calling it")
                }
                pending.append(contentsOf: calls.filter { functions[$0] != nil })
            }
        }
    }

    @Test func theScanSeesARaisingCall() throws {
        #expect(Self.apiCalls(in: "luaL_newmetatable(L, name); lua_getfield(L, -1, \"x\")") == ["luaL_newmetatable", "lua_getfield"])
        #expect(!Self.nonRaising.contains("luaL_newmetatable") && !Self.nonRaising.contains("luaL_testudata"))
        #expect(!Self.nonRaising.contains("lua_getfield") && !Self.nonRaising.contains("lua_next"))
    }

    @Test func onlyTheRuntimeImportsLua() throws {
        for folder in ["KeyhostBindings", "keyhost"] {
            for file in try Self.files(in: folder, extension: "swift") {
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("import CLua"), "\(file.lastPathComponent) must use LuaRuntime, not the C API")
                #expect(!text.contains("import CKeyhostLua"), "\(file.lastPathComponent) must use LuaRuntime, not the C API")
            }
        }
    }
}
