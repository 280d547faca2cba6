import Foundation
import Testing

@Suite struct ModuleLoadingTests {
    static let probe = """
        local hex, where = require 'keyhost.hex'
        print(where)
        print(debug.getinfo(hex.encode, 'S').source)
        """

    @Test func stdlibIsFoundFromAnyWorkingDirectory() throws {
        // `run`, not `eval`: eval preloads keyhost.hex as a global, and a second require has no loader data.
        let run = try Keyhost.run(["run", "-"], stdin: Self.probe, cwd: URL(fileURLWithPath: "/"))
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first?.hasSuffix("stdlib/keyhost/hex.lua") == true)
        #expect(lines.last == "@stdlib/keyhost/hex.lua")
    }

    @Test func keyhostPathAddsSearchRootsFirst() throws {
        let dir = try Keyhost.scratch(["mods/greet.lua": "return { hello = function() return 'hi' end }", "mods/pkg/init.lua": "return 'pkg init'"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(
            ["eval", "local g, where = require 'greet' return g.hello(), require 'pkg', where"],
            cwd: URL(fileURLWithPath: "/"), environment: ["KEYHOST_PATH": "/nonexistent:" + dir.appendingPathComponent("mods").path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "\"hi\"\t\"pkg init\"\t\"\(dir.appendingPathComponent("mods/greet.lua").path)\"\n")
    }

    @Test func nativeModulesComeFromPreload() throws {
        let run = try Keyhost.run(["eval", "return require('keyhost').version == require('keyhost').version, type(package.preload['keyhost.hd'])"])
        #expect(run.stdout == "true\t\"function\"\n")
    }

    /// The binding benchmark's module is registered for scripts/bench only (KEYHOST_BENCH), not in every state.
    @Test func theBenchmarkModuleIsOnlyThereForTheBenchmark() throws {
        let probe = ["eval", "return type(package.preload['keyhost.bench'])"]
        #expect(try Keyhost.run(probe).stdout == "\"nil\"\n")
        #expect(try Keyhost.run(probe, environment: ["KEYHOST_BENCH": "1"]).stdout == "\"function\"\n")
    }

    @Test func installedPrefixFindsItsOwnStdlib() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let install = Process()
        install.executableURL = Keyhost.repository.appendingPathComponent("scripts/install")
        install.arguments = ["--binary", Keyhost.binary.path, "--no-docs", prefix.path]
        install.standardOutput = FileHandle.nullDevice
        try install.run()
        install.waitUntilExit()
        #expect(install.terminationStatus == 0)
        let run = try Keyhost.run(["run", "-"], stdin: Self.probe, cwd: URL(fileURLWithPath: "/"), executable: prefix.appendingPathComponent("bin/keyhost"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix(prefix.appendingPathComponent("share/keyhost/stdlib/keyhost/hex.lua").path + "\n"))
    }
}

/// The Lua-side test files and the examples, each run through the binary.
@Suite struct LuaScriptTests {
    static func files(in folder: String, suffix: String) -> [String] {
        let dir = Keyhost.repository.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { folder + "/" + $0 }
    }

    @Test(arguments: files(in: "Tests/lua", suffix: "_test.lua"))
    func luaTestFile(path: String) throws {
        let run = try Keyhost.run(["run", path])
        #expect(run.status == 0, "\(path):\n\(run.stdout)\n\(run.stderr)")
        let last = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.range(of: #"^[1-9]\d* passed, 0 failed$"#, options: .regularExpression) != nil, "\(path): \(last)")
    }

    @Test(arguments: files(in: "examples", suffix: ".lua"))
    func example(path: String) throws {
        let run = try Keyhost.run(["run", path])
        #expect(run.status == 0, "\(path):\n\(run.stderr)")
        #expect(!run.stdout.isEmpty)
    }

    @Test func thereAreLuaTestsAndExamples() {
        #expect(Self.files(in: "Tests/lua", suffix: "_test.lua").count >= 3)
        #expect(Self.files(in: "examples", suffix: ".lua").contains("examples/hello.lua"))
    }
}
