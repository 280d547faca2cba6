import Foundation
import Testing

/// `keyhost run --sandbox` against the reproducers of issue 9 (section B), through the binary.
@Suite struct SandboxCommandTests {
    @Test func resultsOfARunAreNeverConverted() throws {
        let dir = try Keyhost.scratch([
            "shared.lua": "local t = {} for i = 1, 40 do t = {t, t} end return t",
            "cycle.lua": "local t = {} t.self = t return t",
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let shared = try Keyhost.run(["run", "--sandbox", "--memory-limit", "1", "--time-limit", "1", "shared.lua"], cwd: dir)
        #expect(shared.status == 0, "\(shared.stderr)")
        let cycle = try Keyhost.run(["run", "cycle.lua"], cwd: dir)
        #expect(cycle.status == 0, "\(cycle.stderr)")
        #expect(cycle.stderr.isEmpty)
    }

    @Test func pathologicalPatternStopsAtTheTimeLimit() throws {
        let pattern = String(repeating: "a*", count: 20) + "b"
        let dir = try Keyhost.scratch(["find.lua": "print(string.find(('a'):rep(100), '\(pattern)'))"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "--sandbox", "--time-limit", "0.5", "--instruction-limit", "1000000000000", "find.lua"], cwd: dir)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("keyhost: sandbox: time limit of 0.5 seconds exceeded"))
    }

    @Test func limitsWithoutTheSandboxAreRefused() throws {
        let dir = try Keyhost.scratch(["ok.lua": "print('ran')"])
        defer { try? FileManager.default.removeItem(at: dir) }
        for option in [["--memory-limit", "1"], ["--instruction-limit", "10"], ["--time-limit", "1"]] {
            let run = try Keyhost.run(["run"] + option + ["ok.lua"], cwd: dir)
            #expect(run.status == 64)
            #expect(run.stdout.isEmpty, "the script must not run")
            #expect(run.stderr.contains("\(option[0]) applies only to sandboxed code: add --sandbox"))
        }
    }

    @Test(arguments: [
        (["--instruction-limit", "0"], "--instruction-limit must be at least 1"),
        (["--instruction-limit", "-5"], "The value '-5' is invalid for '--instruction-limit <count>'"),
        (["--memory-limit", "-1"], "--memory-limit must be between 1 and 1048576 MiB, got -1"),
        (["--time-limit", "0"], "--time-limit must be a positive number of seconds"),
        (["--time-limit", "inf"], "--time-limit must be a positive number of seconds"),
    ])
    func badLimitsAreNamed(option: [String], message: String) throws {
        let dir = try Keyhost.scratch(["ok.lua": "print('ran')"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "--sandbox"] + option + ["ok.lua"], cwd: dir)
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }

    @Test func compilingIsChargedToTheMemoryLimit() throws {
        let dir = try Keyhost.scratch(["big.lua": "local t = {" + String(repeating: "1,", count: 2_500_000) + "}"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "--sandbox", "--memory-limit", "1", "big.lua"], cwd: dir)
        #expect(run.status == 1)
        #expect(run.stderr == "keyhost: sandbox: memory limit of 1048576 bytes exceeded\n")
    }
}
