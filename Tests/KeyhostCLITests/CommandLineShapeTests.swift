import Foundation
import Testing

/// The command line's own shape: `-e` as the lua interpreter takes it, `--version`, and JSON errors.
@Suite struct CommandLineShapeTests {
    /// The argument parser prints an option's default itself; help that names it again reads "(default: 8)
    /// (default: 8)". Walks every command of the tree.
    @Test func noOptionHelpRepeatsItsDefault() throws {
        let dump = try Keyhost.run(["--experimental-dump-help"])
        #expect(dump.status == 0)
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var repeated: [String] = [], options = 0
        func walk(_ command: [String: Any], _ path: String) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                options += 1
                let help = (argument["abstract"] as? String ?? "").lowercased()
                if argument["defaultValue"] != nil, help.contains("(default") {
                    repeated.append("\(path) \(argument["valueName"] ?? ""): \(help)")
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(sub, path + " " + (sub["commandName"] as? String ?? "?"))
            }
        }
        walk(try #require(tree["command"] as? [String: Any]), "keyhost")
        #expect(options > 100)
        #expect(repeated.isEmpty, "\(repeated)")
    }

    /// The options lua5.4 takes before a script, where they cost nothing: -l, -i, -v, and `=expr`.
    @Test func luaInterpreterOptions() throws {
        let library = try Keyhost.run(["-l", "keyhost.psbt", "-l", "h=keyhost.hash", "-e", "return type(psbt.parse), #h.sha256('')"])
        #expect(library.status == 0, "\(library.stderr)")
        #expect(library.stdout == "\"function\"\t32\n")
        let bad = try Keyhost.run(["-l", "x\"y", "-e", "1"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("-l takes a module name"))
        let missing = try Keyhost.run(["-l", "keyhost.nothing", "-e", "1"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("module 'keyhost.nothing' not found"))

        let version = try Keyhost.run(["-v"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("keyhost ") && version.stdout.contains("Lua 5.4"))

        #expect(try Keyhost.run(["eval", "=1 + 2"]).stdout == "3\n")

        // -i: the prompt after the script, in its state; arg as a script gets it.
        let dir = try Keyhost.scratch(["s.lua": "x = 5\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let after = try Keyhost.run(["-i", "run", "s.lua"], stdin: "=x * 2\n", cwd: dir)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(after.stdout.contains("10\n"), "\(after.stdout)")
        let prompt = try Keyhost.run(["-i", "repl", "a", "b"], stdin: "return #arg, arg[1], arg[2]\n", cwd: dir)
        #expect(prompt.stdout.contains("2\t\"a\"\t\"b\""), "\(prompt.stdout)")
        let preamble = try Keyhost.run(["-e", "y = 7", "-i"], stdin: "=y\n", cwd: dir)
        #expect(preamble.stdout.contains("7\n"), "\(preamble.stdout)")
    }

    /// Every command with a key source reads KEYHOST_MNEMONIC when no source is named, as `keyhost key` does.
    @Test func keyhostMnemonicIsTheDefaultKeySourceEverywhere() throws {
        let words = EthCommandTests.words
        let dir = try Keyhost.scratch(["tx.json": EthCommandTests.tx1559, "t.psbt": try PSBTCommandTests.make([PSBTCommandTests.p2wpkh]),
                                       "used.txt": "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["KEYHOST_MNEMONIC": words]
        let eth = try Keyhost.run(["eth", "sign-tx", "tx.json", "--json"], cwd: dir, environment: env)
        #expect(eth.status == 0, "\(eth.stderr)")
        #expect(eth.stdout.contains(EthCommandTests.address), "\(eth.stdout)")
        let psbt = try Keyhost.run(["psbt", "sign", "t.psbt", "-o", "s.psbt"], cwd: dir, environment: env)
        #expect(psbt.status == 0, "\(psbt.stderr)")
        #expect(psbt.stderr.contains("signed 1 of 1 inputs"))
        let discover = try Keyhost.run(["discover", "--source", "index:used.txt", "--gap-limit", "2", "--json"], cwd: dir, environment: env)
        #expect(discover.status == 0, "\(discover.stderr)")
        #expect(discover.stdout.contains("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"))
        #expect(try Keyhost.run(["key", "address", "--path", "m/84'/0'/0'/0/0"], cwd: dir, environment: env).stdout
            .contains("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"))
        // Unset, and no terminal to ask on, each says where a mnemonic comes from (no_secret, as key address says it).
        let none = try Keyhost.run(["eth", "sign-tx", "tx.json"], cwd: dir)
        #expect(none.status == 1 && none.stderr.contains("KEYHOST_MNEMONIC"), "\(none.stderr)")
    }

    @Test func repeatedEvaluateOptionsShareOneState() throws {
        let run = try Keyhost.run(["-e", "x = 20", "-e", "return x + 1", "-ereturn x * 2"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "21\n40\n")
    }

    @Test func evaluateOptionsRunBeforeAScript() throws {
        let dir = try Keyhost.scratch(["s.lua": "print(greeting, ...)\nreturn 7\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["-e", "greeting = 'hi'", "run", "s.lua", "a", "-e"], cwd: dir)
        #expect(run.status == 0, "\(run.stderr)")
        // The script's own arguments keep their -e; the preamble's result is not printed.
        #expect(run.stdout == "hi\ta\t-e\n")
        let failing = try Keyhost.run(["-e", "error('early')", "run", "s.lua"], cwd: dir)
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("early"))
        #expect(!failing.stdout.contains("hi"))
    }

    @Test func evaluateOptionsInThePlaceOfAnythingElseAreUsageErrors() throws {
        let misplaced = try Keyhost.run(["-e", "x = 1", "card", "list"])
        #expect(misplaced.status == 64)
        #expect(misplaced.stderr.contains("-e, -l and -i go alone, before 'run FILE"))
        let missing = try Keyhost.run(["-e"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("-e needs Lua code"))
    }

    @Test func versionNamesTheLibrariesAndTheCommit() throws {
        let run = try Keyhost.run(["--version"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        // Checked against the tools themselves, not against keyhost's idea of them: the commit is one git knows
        // (the binary may be older than HEAD when a commit followed the build).
        #expect(lines[0].hasPrefix("keyhost "))
        let commit = try #require(lines[0].split(separator: "(commit ").last?.split(separator: ")").first?.split(separator: "-").first)
        #expect(commit.count == 12)
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        git.arguments = ["-C", Keyhost.repository.path, "cat-file", "-e", "\(commit)^{commit}"]
        try git.run()
        git.waitUntilExit()
        #expect(git.terminationStatus == 0, "git does not know commit \(commit)")
        #expect(lines[1].hasPrefix("Lua 5.4."))
        let lua = try Keyhost.run(["-e", "return _VERSION"])
        #expect(lines[1].hasPrefix(lua.stdout.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\"", with: "")))
        let pkg = Process()
        pkg.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
        pkg.arguments = ["--modversion", "libsecp256k1"]
        let pkgOut = Pipe()
        pkg.standardOutput = pkgOut
        try pkg.run()
        pkg.waitUntilExit()
        let secp = String(decoding: pkgOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lines[2].hasPrefix("libsecp256k1 \(secp) "))
        #expect(lines[3].hasPrefix("OpenSSL 3."))
        #expect(lines[4].hasPrefix("pcsc-lite 1."))
    }

    @Test func jsonErrorsCarryAKind() throws {
        let usage = try Keyhost.run(["discover", "--json", "--coin", "xyz", "--xpub", "x", "--source", "index:x"])
        #expect(usage.status == 64)
        let error = try #require((try JSONSerialization.jsonObject(with: Data(usage.stderr.utf8)) as? [String: Any])?["error"] as? [String: Any])
        #expect(error["kind"] as? String == "usage")
        #expect((error["message"] as? String)?.contains("unknown coin") == true)
        #expect(usage.stdout.isEmpty)
    }
}
