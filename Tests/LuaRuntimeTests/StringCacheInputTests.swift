import Foundation
import Testing

/// Lua's lua_pushstring, lua_getfield, lua_setfield, lua_getglobal, lua_setglobal and the luaL_
/// helpers built on them look a text up in a cache keyed by its C address (lstring.c, luaS_new). A
/// text longer than 40 bytes is allocated again or not depending on where it lies, which moves a
/// token run's collector and arena (docs/lua-api.md, "What a run can depend on"). These scans keep
/// keyhost's own code to texts by length (kh_pushtext, lua_pushlstring) and to short C literals there.
@Suite struct StringCacheInputTests {
    /// Lua API functions that pass a C string through luaS_new, with the (1-based) index of that argument.
    static let cached: [String: Int] = [
        "lua_pushstring": 2, "lua_pushliteral": 2, "lua_getfield": 3, "lua_setfield": 3, "lua_getglobal": 2,
        "lua_setglobal": 2, "luaL_getmetafield": 3, "luaL_callmeta": 3, "luaL_getsubtable": 3, "luaL_requiref": 2,
        "luaL_newmetatable": 2, "luaL_setmetatable": 2, "luaL_testudata": 3, "luaL_checkudata": 3,
        "luaL_loadstring": 2, "luaL_dostring": 2, "lua_load": 4, "luaL_loadbuffer": 4, "luaL_loadbufferx": 4,
    ]

    /// Calls whose argument is not a literal but is short or harmless, each checked by hand: the
    /// standard libraries opened in a loop (each name a LUA_*LIBNAME), kh_load's chunk name (cut in
    /// a deterministic state by kh_short_chunkname), and kh_compile's, in a state of its own that
    /// is closed before any run.
    static let allowed: Set<String> = [
        "luaL_requiref lib->name", "luaL_loadbufferx kh_short_chunkname(L, name, cut)", "luaL_loadbufferx name",
    ]

    /// Each call of a cached API in `text`: its name and its arguments, split at top-level commas.
    static func calls(in text: String) -> [(name: String, arguments: [String])] {
        let ns = text as NSString
        let regex = try! NSRegularExpression(pattern: "\\b(luaL?_[a-z_]+)\\s*\\(")
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).compactMap { match in
            let name = ns.substring(with: match.range(at: 1))
            guard cached[name] != nil else { return nil }
            var depth = 1, index = match.range.location + match.range.length, current = "", arguments: [String] = []
            var inString = false
            while index < ns.length, depth > 0 {
                let c = Character(UnicodeScalar(ns.character(at: index))!)
                index += 1
                if inString {
                    current.append(c)
                    if c == "\"" && !current.hasSuffix("\\\"") { inString = false }
                    continue
                }
                switch c {
                case "\"": inString = true; current.append(c)
                case "(": depth += 1; current.append(c)
                case ")": depth -= 1; if depth > 0 { current.append(c) }
                case "," where depth == 1: arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines)); current = ""
                default: current.append(c)
                }
            }
            arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
            return (name, arguments)
        }
    }

    /// A C string literal of at most 40 bytes, or one of Lua's own short name macros.
    static func isShortLiteral(_ argument: String) -> Bool {
        if argument.range(of: "^LUA_[A-Z0-9]+(LIBNAME|_TABLE|NAME)$", options: .regularExpression) != nil { return true }
        guard argument.count >= 2, argument.first == "\"", argument.last == "\"", !argument.dropFirst().dropLast().contains("\"") else { return false }
        return argument.utf8.count - 2 <= 40
    }

    @Test func keyhostsCHandsTheCacheOnlyShortLiterals() throws {
        let files = try LongjmpSafetyTests.files(in: "CKeyhostLua", extension: "c")
        #expect(files.count >= 6)
        var seen = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            // Comments name the functions without calling them.
            let code = text.replacingOccurrences(of: "//[^\n]*", with: "", options: .regularExpression)
            for call in Self.calls(in: code) {
                seen += 1
                let index = Self.cached[call.name]! - 1
                guard index < call.arguments.count else { Issue.record("\(file.lastPathComponent): \(call.name) with \(call.arguments)"); continue }
                let argument = call.arguments[index]
                if call.name == "luaL_loadstring" || call.name == "luaL_dostring" {
                    Issue.record("\(file.lastPathComponent) calls \(call.name), which names a chunk by its whole text")
                } else if !Self.isShortLiteral(argument) && !Self.allowed.contains("\(call.name) \(argument)") {
                    Issue.record("\(file.lastPathComponent): \(call.name)(… \(argument) …) hands Lua's string cache a text that is not a short literal: use kh_pushtext and raw access")
                }
            }
        }
        #expect(seen >= 20)
    }

    @Test func swiftHandsLuaTextsByLength() throws {
        for folder in ["LuaRuntime", "KeyhostPlayer"] {
            for file in try LongjmpSafetyTests.files(in: folder, extension: "swift") {
                let text = try String(contentsOf: file, encoding: .utf8)
                for call in Self.calls(in: text) where call.name != "luaL_loadbufferx" {
                    Issue.record("\(folder)/\(file.lastPathComponent) calls \(call.name): push texts with LuaStack.pushText (lua_pushlstring) and set fields raw")
                }
            }
        }
    }

    @Test func theScanSeesACachedText() {
        let found = Self.calls(in: "lua_pushstring(L, name); lua_setfield(L, -2, \"ok, fine\"); lua_getfield(L, f(a, b), k);")
        #expect(found.map(\.name) == ["lua_pushstring", "lua_setfield", "lua_getfield"])
        #expect(found[1].arguments == ["L", "-2", "\"ok, fine\""])
        #expect(found[2].arguments == ["L", "f(a, b)", "k"])
        #expect(!Self.isShortLiteral("name") && Self.isShortLiteral("\"__index\"") && Self.isShortLiteral("LUA_LOADED_TABLE") && Self.isShortLiteral("LUA_UTF8LIBNAME"))
        #expect(!Self.isShortLiteral("\"" + String(repeating: "x", count: 41) + "\""))
    }
}
