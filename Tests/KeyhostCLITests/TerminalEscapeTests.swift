import Foundation
import Testing

/// Text from outside keyhost that a command echoes to people (a job file's wallet id, a token's metadata and
/// records, error messages quoting a user's input) reaches the terminal with its C0 and C1 control characters
/// escaped as `\xHH`: an id like "\e]0;title\a" must not retitle the window, and U+009B (CSI) must not start a
/// control sequence. JSON output escapes them as \u00HH.
@Suite struct TerminalEscapeTests {
    /// ESC (an OSC that retitles the window, ended by BEL), then C1 CSI, then DEL.
    static let hostile = "w\u{1B}]0;pwned\u{07}\u{9B}31mred\u{7F}"
    static let shown = "w\\x1b]0;pwned\\x07\\x9b31mred\\x7f"

    /// Whether `text` holds any C0 control but LF and TAB, DEL or a C1 control.
    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
    }

    static func jobLine(id: String, xpub: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["id": id, "xpub": xpub]), as: UTF8.self)
    }

    @Test func aJobFilesIdIsShownEscapedInEveryFormAndInErrors() throws {
        let zpub = try #require(DiscoverCommandTests.wallet["zpub0"])
        let used = try #require(DiscoverCommandTests.wallet["m/84'/0'/0'/0/2"])
        let dir = try Keyhost.scratch(["used.txt": used + "\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let jobs = dir.appendingPathComponent("jobs.jsonl")
        try (try Self.jobLine(id: Self.hostile, xpub: zpub) + "\n").write(to: jobs, atomically: true, encoding: .utf8)
        let base = ["discover", "--jobs", jobs.path, "--source", "index:\(dir.path)/used.txt", "--gap-limit", "5"]

        for format in [[], ["--csv"]] {
            let run = try Keyhost.run(base + format)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains(Self.shown), "\(run.stdout.debugDescription)")
            #expect(!Self.hasControls(run.stdout) && !Self.hasControls(run.stderr), "\(run.stdout.debugDescription) \(run.stderr.debugDescription)")
        }
        let json = try Keyhost.run(base + ["--json"])
        #expect(json.status == 0 && json.stdout.contains("w\\u001b]0;pwned\\u0007\\u009b31mred\\u007f"), "\(json.stdout.debugDescription)")
        #expect(!Self.hasControls(json.stdout))

        // The same id twice: the error names it, escaped.
        try ((try Self.jobLine(id: Self.hostile, xpub: zpub) + "\n") + (try Self.jobLine(id: Self.hostile, xpub: zpub) + "\n"))
            .write(to: jobs, atomically: true, encoding: .utf8)
        let twice = try Keyhost.run(base)
        #expect(twice.status == 64 && twice.stderr.contains(Self.shown), "\(twice.stderr.debugDescription)")
        #expect(!Self.hasControls(twice.stderr), "\(twice.stderr.debugDescription)")
    }

    @Test func aTokensMetadataIsShownEscapedByInspect() throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("t.khtok").path
        let script = """
            local token, ec, hex = require "keyhost.token", require "keyhost.ec", require "keyhost.hex"
            local issuer = ec.private_key(hex.decode("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))
            local f = assert(io.open("\(file)", "w"))
            f:write(token.issue { program = "return", value = 1, unit = "X", to = ec.public_key(ec.generate()), issuer_key = issuer,
                                  meta = { note = "\\27]0;pwned\\7\\194\\155" .. "31mred" } }, "\\n")
            f:close()
            """
        let issued = try Keyhost.run(["-e", script])
        #expect(issued.status == 0, "\(issued.stderr)")
        let run = try Keyhost.run(["token", "inspect", file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\\u001b]0;pwned\\u0007\\u009b31mred"), "\(run.stdout.debugDescription)")
        #expect(!Self.hasControls(run.stdout), "\(run.stdout.debugDescription)")
    }
}
