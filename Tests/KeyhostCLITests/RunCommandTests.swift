import Foundation
import Testing

@Suite struct RunCommandTests {
    @Test func helloExampleRuns() throws {
        let run = try Keyhost.run(["run", "examples/hello.lua"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("hello from keyhost "))
        #expect(run.stderr.isEmpty)
    }

    @Test func argumentsReachTheScriptAsLuaDoes() throws {
        let dir = try Keyhost.scratch(["args.lua": """
            print(arg[0], #arg, select('#', ...), ...)
            print(arg[-1] ~= nil, arg[1], arg[3])
            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "args.lua", "--flag", "-x", "two words"], cwd: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "args.lua\t3\t3\t--flag\t-x\ttwo words\ntrue\t--flag\ttwo words\n")
    }

    @Test func standardInputAsAScript() throws {
        let dash = try Keyhost.run(["run", "-", "a"], stdin: "print('from stdin', ...)")
        #expect(dash.status == 0)
        #expect(dash.stdout == "from stdin\ta\n")
        let bare = try Keyhost.run([], stdin: "print(1 + 1)")
        #expect(bare.stdout == "2\n")
        let repl = try Keyhost.run(["repl"], stdin: "io.write('piped')")
        #expect(repl.stdout == "piped")
    }

    @Test func uncaughtErrorsPrintMessageAndTraceback() throws {
        let dir = try Keyhost.scratch(["boom.lua": "print('before')\nlocal function f()\n  error('boom')\nend\nf()\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "boom.lua"], cwd: dir)
        #expect(run.status == 1)
        #expect(run.stdout == "before\n")
        #expect(run.stderr.hasPrefix("keyhost: boom.lua:3: boom\nstack traceback:\n"))
        #expect(run.stderr.contains("boom.lua:3: in local 'f'"))
        #expect(run.stderr.contains("boom.lua:5: in main chunk"))
    }

    @Test(arguments: [
        ("error(setmetatable({}, {__tostring = function() return 'described' end}))", "keyhost: described\n"),
        ("error({})", "keyhost: (error object is a table value)\nstack traceback:"),
        ("local x = <", "keyhost: e.lua:1: unexpected symbol near '<'\n"),
        ("require('keyhost.hash').sha256(nil)", "keyhost: e.lua:1: bad argument #1 to 'sha256' (string expected, got nil)\nstack traceback:"),
        ("require('no.such.module')", "keyhost: e.lua:1: module 'no.such.module' not found:"),
    ])
    func errorReports(code: String, expected: String) throws {
        let dir = try Keyhost.scratch(["e.lua": code])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "e.lua"], cwd: dir)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix(expected), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func osExitClosesTheStateFirst() throws {
        let dir = try Keyhost.scratch(["exit.lua": """
            local t <close> = setmetatable({}, {__close = function() print('closed') end})
            setmetatable({}, {__gc = function() print('collected') end})
            io.write('buffered ')
            os.exit(7)
            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "exit.lua"], cwd: dir)
        #expect(run.status == 7)
        #expect(run.stdout == "buffered closed\ncollected\n")
        #expect(try Keyhost.run(["eval", "os.exit(true)"]).status == 0)
        #expect(try Keyhost.run(["eval", "os.exit(false)"]).status == 1)
    }

    @Test func shebangLineIsSkippedAndLinesStayNumbered() throws {
        let dir = try Keyhost.scratch(["s.lua": "#!/usr/bin/env keyhost run\nprint('ok')\nerror('line three')\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "s.lua"], cwd: dir)
        #expect(run.stdout == "ok\n")
        #expect(run.stderr.hasPrefix("keyhost: s.lua:3: line three"))
    }

    @Test func missingScript() throws {
        let run = try Keyhost.run(["run", "does-not-exist.lua"])
        #expect(run.status == 1)
        #expect(run.stderr == "keyhost: cannot read does-not-exist.lua: No such file or directory\n")
    }

    @Test func sandboxedRun() throws {
        let dir = try Keyhost.scratch(["io.lua": "return io.open('/etc/passwd')", "spin.lua": "while true do end", "ok.lua": "print(string.format('%d', 6 * 7))"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let io = try Keyhost.run(["run", "--sandbox", "io.lua"], cwd: dir)
        #expect(io.status == 1)
        #expect(io.stderr.hasPrefix("keyhost: io.lua:1: sandbox: 'io' is not available in the sandbox"))
        let spin = try Keyhost.run(["run", "--sandbox", "--instruction-limit", "100000", "spin.lua"], cwd: dir)
        #expect(spin.stderr == "keyhost: sandbox: instruction budget of 100000 instructions exceeded\n")
        let ok = try Keyhost.run(["run", "--sandbox", "ok.lua"], cwd: dir)
        #expect(ok.stdout == "42\n")
        let bad = try Keyhost.run(["run", "--sandbox", "--memory-limit", "0", "ok.lua"], cwd: dir)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--memory-limit must be between 1 and 1048576 MiB, got 0"))
    }
}

@Suite struct EvalAndHelpTests {
    @Test func evalPrintsReturnedValues() throws {
        #expect(try Keyhost.run(["eval", "1 + 1"]).stdout == "2\n")
        #expect(try Keyhost.run(["-e", "return 1, 'a', {b = 2}, 2.0"]).stdout == "1\t\"a\"\t{b = 2}\t2.0\n")
        #expect(try Keyhost.run(["eval", "local x = 1"]).stdout == "")
        let failed = try Keyhost.run(["eval", "error('nope')"])
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("keyhost: (command line):1: nope\nstack traceback:"))
        let incomplete = try Keyhost.run(["eval", "for i = 1, 2 do"])
        #expect(incomplete.status == 1)
        #expect(incomplete.stderr.contains("'end' expected near <eof>"))
    }

    /// --raw takes what the plain form takes (an expression or statements) and writes the values' bytes.
    @Test func evalRawTakesExpressionsAsWell() throws {
        #expect(try Keyhost.run(["eval", "--raw", "hex.decode('41')"]).stdout == "A")
        #expect(try Keyhost.run(["eval", "--raw", "\"A\""]).stdout == "A")
        #expect(try Keyhost.run(["eval", "--raw", "'a', 1, 2.5"]).stdout == "a12.5")
        #expect(try Keyhost.run(["eval", "--raw", "return 'x' .. 'y'"]).stdout == "xy")
        #expect(try Keyhost.run(["eval", "--raw", "local x = 1"]).stdout == "")
        let failed = try Keyhost.run(["eval", "--raw", "error('nope')"])
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("keyhost: (command line):1: nope\nstack traceback:"), "\(failed.stderr)")
        let table = try Keyhost.run(["eval", "--raw", "{}"])
        #expect(table.status == 1)
        #expect(table.stderr.contains("--raw writes strings and numbers only; the code returned a table"))
    }

    @Test func versionAndHelp() throws {
        let version = try Keyhost.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.range(of: #"^keyhost \d+\.\d+\.\d+ \(commit "#, options: .regularExpression) != nil)
        for command in [[], ["run"], ["eval"], ["repl"]] {
            let help = try Keyhost.run(command + ["--help"])
            #expect(help.status == 0, "\(command)")
            #expect(help.stdout.contains("USAGE:"), "\(command)")
        }
    }

    @Test func unknownOptionsAreUsageErrors() throws {
        // The parser's own messages start as every keyhost error does.
        for arguments in [["frobnicate"], ["key", "address", "--no-such-option"], ["discover"]] {
            let run = try Keyhost.run(arguments)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.stderr.hasPrefix("keyhost: "), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("Error:"), "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
    }

    @Test("keyhost FILE.lua, lua5.4's habit, is a usage error that names keyhost run FILE")
    func scriptGivenAsCommand() throws {
        let dir = try Keyhost.scratch(["job.lua": "print(1)\n", "job": "print(2)\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        for (arguments, fix) in [(["job.lua"], "keyhost run job.lua"), (["job", "x"], "keyhost run job [ARGS…]"),
                                 (["missing.lua"], "keyhost run missing.lua")] {
            let run = try Keyhost.run(arguments, cwd: dir)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.stderr.contains("is not a command") && run.stderr.contains(fix), "\(arguments): \(run.stderr)")
        }
    }
}
