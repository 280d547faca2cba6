import Foundation
import Testing

/// The reproducers of the Lua 5.4.4 bugs (Tests/sandbox-bugs, analysed in docs/sandbox-lua-bugs.md)
/// through the binary: the ones keyhost or Debian fixed print "ok"; the compiler bugs that only a newer
/// Lua fixes (wrong code, no memory error) must at least end as an ordinary error, never a crash.
@Suite struct LuaBugReproducerTests {
    /// Fixed in the sandbox: by keyhost's guards (08, 09, 11), by its sandbox rules (07, 10, 14), by Debian (02, 04), or never reachable (05, 12, 13).
    static let fixedInSandbox = ["02", "04", "05", "07", "08", "09", "10", "11", "12", "13", "14"]
    /// Fixed in the full profile as well (every guard applies there too).
    static let fixedInFullProfile = ["02", "04", "05", "08", "09", "11", "12"]

    static func file(_ number: String) throws -> String {
        let folder = Keyhost.repository.appendingPathComponent("Tests/sandbox-bugs")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        return "Tests/sandbox-bugs/" + (try #require(names.first { $0.hasPrefix(number + "_") && $0.hasSuffix(".lua") }))
    }

    @Test(arguments: (2...15).map { String(format: "%02d", $0) })
    func reproducer(number: String) throws {
        let path = try Self.file(number)
        // 13 needs a tight cap to reach its allocation failure quickly (see the folder's README).
        let memory = number == "13" ? "4" : "64"
        let sandboxed = try Keyhost.run(["run", "--sandbox", "--memory-limit", memory, "--time-limit", "30", path])
        let full = try Keyhost.run(["run", path])
        for (run, fixed) in [(sandboxed, Self.fixedInSandbox.contains(number)), (full, Self.fixedInFullProfile.contains(number))] {
            #expect(run.status == 0 || run.status == 1, "\(path) died: status \(run.status)")
            #expect(!run.stderr.contains("Program crashed"), "\(path) crashed")
            if fixed {
                #expect(run.status == 0 && run.stdout == "ok\n", "\(path): \(run.stderr.prefix(300))")
            }
        }
    }
}
