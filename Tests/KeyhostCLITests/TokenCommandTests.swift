import Foundation
import Testing

/// `keyhost token issue` and `keyhost token inspect` through the binary.
@Suite struct TokenCommandTests {
    static let issuerHex = "0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"
    // The compressed public key of the private key 0x01 (the generator point).
    static let holder = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"

    func issue(_ extra: [String], in dir: URL, env: [String: String] = ["ISSUER": issuerHex]) throws -> KeyhostRun {
        try Keyhost.run(
            ["token", "issue", "--program", "voucher.lua", "--value", "500", "--unit", "EUR-cent", "--to", Self.holder,
             "--issuer-key-env", "ISSUER"] + extra, cwd: dir, environment: env)
    }

    @Test func issueThenInspect() throws {
        let dir = try Keyhost.scratch(["voucher.lua": "emit{redeemed = token.value}\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let issued = try issue(["--expires", "2030-01-01", "-o", "t.tok"], in: dir)
        #expect(issued.status == 0, "\(issued.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("t.tok").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let shown = try Keyhost.run(["token", "inspect", "t.tok"], cwd: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("value       500 EUR-cent"))
        #expect(shown.stdout.contains("valid       until 2030-01-01T00:00:00Z (exclusive)"))
        #expect(shown.stdout.contains("holder      \(Self.holder)"))
        #expect(shown.stdout.contains("program     lua54-source, 29 bytes, sha256 "))
        #expect(shown.stdout.contains("signature   valid (BIP340 by the issuer)"))

        let json = try Keyhost.run(["token", "inspect", "--json", "t.tok"], cwd: dir)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let token = try #require((object?["tokens"] as? [[String: Any]])?.first)
        #expect(token["signature_valid"] as? Bool == true)
        #expect(token["expires"] as? Int == 1_893_456_000)
        #expect(token["unit"] as? String == "EUR-cent")

        // The same file again is never overwritten.
        let again = try issue(["-o", "t.tok"], in: dir)
        #expect(again.status == 1)
        #expect(again.stderr.contains("t.tok exists; keyhost never overwrites an output file"))
    }

    /// --program takes a stdlib module by name, so docs' commands work wherever keyhost is installed.
    @Test func programsByModuleName() throws {
        let dir = try Keyhost.scratch(["readme.txt": "not a checkout\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let issued = try Keyhost.run(["token", "issue", "--program", "keyhost.cash", "--value", "5", "--unit", "EUR-cent", "--to", Self.holder,
                                      "--issuer-key-env", "ISSUER", "-o", "c.tok"], cwd: dir, environment: ["ISSUER": Self.issuerHex])
        #expect(issued.status == 0, "\(issued.stderr)")
        let cash = try String(contentsOf: Keyhost.repository.appendingPathComponent("stdlib/keyhost/cash.lua"), encoding: .utf8)
        let shown = try Keyhost.run(["token", "inspect", "c.tok"], cwd: dir)
        #expect(shown.stdout.contains("program     lua54-source, \(cash.utf8.count) bytes"), "\(shown.stdout)")
        let missing = try Keyhost.run(["token", "issue", "--program", "keyhost.nothing", "--value", "5", "--unit", "EUR-cent", "--to", Self.holder,
                                       "--issuer-key-env", "ISSUER"], cwd: dir, environment: ["ISSUER": Self.issuerHex])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("--program keyhost.nothing: no such file, and no module keyhost.nothing in keyhost's stdlib"), "\(missing.stderr)")
    }

    @Test func tamperedTokensAreShownAsSuch() throws {
        let dir = try Keyhost.scratch(["voucher.lua": "return 1\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let issued = try issue([], in: dir)
        #expect(issued.status == 0, "\(issued.stderr)")
        // Raise the value from 500 (0x1901f4) to 756 (0x1902f4) in the encoded bytes and re-armour.
        let line = issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var payload = String(line.dropFirst("khtok1:".count)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        var bytes = [UInt8](try #require(Data(base64Encoded: payload)))
        let at = try #require((0..<bytes.count - 2).first { bytes[$0] == 0x19 && bytes[$0 + 1] == 0x01 && bytes[$0 + 2] == 0xF4 })
        bytes[at + 1] = 0x02
        let forged = "khtok1:" + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try Data((forged + "\n").utf8).write(to: dir.appendingPathComponent("forged.tok"))
        let shown = try Keyhost.run(["token", "inspect", "forged.tok"], cwd: dir)
        #expect(shown.status == 1)
        #expect(shown.stdout.contains("value       756 EUR-cent"))
        #expect(shown.stdout.contains("signature   INVALID"))
    }

    @Test func precompiledProgramsAreBytecode() throws {
        let dir = try Keyhost.scratch(["voucher.lua": "return 1\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let issued = try issue(["--precompile"], in: dir)
        #expect(issued.status == 0, "\(issued.stderr)")
        let shown = try Keyhost.run(["token", "inspect", "-"], stdin: issued.stdout)
        #expect(shown.stdout.contains("program     lua54-bytecode, "))
    }

    @Test func mistakesAreNamedAndSecretsStayOut() throws {
        let dir = try Keyhost.scratch(["voucher.lua": "return (\n", "ok.lua": "return 1"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let broken = try issue(["-o", "never.tok"], in: dir)
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("keyhost: the program does not compile: voucher.lua:2:"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("never.tok").path))

        let missing = try issue([], in: dir, env: [:])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("the environment variable ISSUER (--issuer-key-env) is not set"))

        let words = "legal winner thank year wave sausage worth useful legal winner thank yellow"
        let badWords = words.replacingOccurrences(of: "yellow", with: "zebra")
        let wrong = try Keyhost.run(
            ["token", "issue", "--program", "ok.lua", "--value", "1", "--unit", "pt", "--to", Self.holder, "--issuer-key-env", "ISSUER"],
            cwd: dir, environment: ["ISSUER": badWords])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("the issuer mnemonic is not valid"))
        for word in Set(badWords.split(separator: " ")) where word.count > 3 { #expect(!wrong.stderr.contains(word)) }

        let date = try issue(["--expires", "2030-02-31"], in: dir)
        #expect(date.status == 64)
        #expect(date.stderr.contains("--expires must be Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, got \"2030-02-31\""))

        let holder = try issue(["--to", "02abcd"], in: dir)
        #expect(holder.status == 1)
        #expect(holder.stderr.contains("--to must be the holder's compressed public key"))
    }

    @Test func inspectRefusesWhatIsNotAToken() throws {
        let dir = try Keyhost.scratch(["notes.txt": "# my tokens\nhello\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["token", "inspect", "notes.txt"], cwd: dir)
        #expect(run.status == 1)
        #expect(run.stderr == "keyhost: notes.txt line 2: not a keyhost token (tokens start with 'khtok1:')\n")
    }
}
