import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost psbt inspect | sign | finalize`, run as a binary on PSBTs embit makes; embit (with btclib's
/// hashes) checks the signatures and extracts the same transaction.
@Suite struct PSBTCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    static let env = ["WORDS": words, "KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"]
    static let p2wpkh = ["kind": "p2wpkh", "path": "m/84h/1h/0h/0/0", "amount": 50_000] as [String: Any]
    static let p2tr = ["kind": "p2tr", "path": "m/86h/1h/0h/0/0", "amount": 60_000] as [String: Any]
    static let p2pkh = ["kind": "p2pkh", "path": "m/44h/1h/0h/0/0", "amount": 70_000] as [String: Any]
    static let p2shP2wpkh = ["kind": "p2sh-p2wpkh", "path": "m/49h/1h/0h/0/0", "amount": 80_000] as [String: Any]

    /// A PSBT (base64) embit makes for the test mnemonic: inputs as given, a payment and a change output.
    static func make(_ inputs: [[String: Any]], extra: [String: Any] = [:]) throws -> String {
        let total = inputs.reduce(0) { $0 + ($1["amount"] as? Int ?? 0) }
        var request: [String: Any] = ["mnemonic": words, "inputs": inputs,
                                      "outputs": [["amount": total - 11_000], ["amount": 10_000, "path": "m/84h/1h/0h/1/0"]]]
        request.merge(extra) { $1 }
        let answer = try PythonOracle.run("psbt_oracle.py", ["make"], input: try JSONSerialization.data(withJSONObject: request))
        return try #require(try json(String(decoding: answer, as: UTF8.self))["psbt"] as? String)
    }

    static func oracle(_ command: String, _ request: [String: Any]) throws -> [String: Any] {
        let answer = try PythonOracle.run("psbt_oracle.py", [command], input: try JSONSerialization.data(withJSONObject: request))
        return try json(String(decoding: answer, as: UTF8.self))
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// Every input carries one signature and every signature checks out (embit reads, btclib hashes).
    static func expectVerified(_ psbt: String, inputs: Int) throws {
        let checked = try #require(try oracle("verify", ["psbt": psbt])["inputs"] as? [[String: Any]])
        #expect(checked.count == inputs)
        #expect(checked.allSatisfy { $0["valid"] as? Bool == true && $0["signatures"] as? Int == 1 }, "\(checked)")
    }

    @Test("inspect, sign with --mnemonic-env, finalize --extract: embit checks the signatures and extracts the same transaction")
    func mnemonicRoundTrip() throws {
        let unsigned = try Self.make([Self.p2pkh, Self.p2shP2wpkh, Self.p2wpkh, Self.p2tr])
        let dir = try Keyhost.scratch(["t.psbt": unsigned + "\n"])
        defer { try? FileManager.default.removeItem(at: dir) }

        let inspect = try Keyhost.run(["psbt", "inspect", "t.psbt", "--coin", "test", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let summary = try Self.json(inspect.stdout)
        let inputs = try #require(summary["inputs"] as? [[String: Any]])
        #expect(inputs.map { $0["script_type"] as? String } == ["p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr"])
        #expect(inputs.allSatisfy { $0["ours"] as? Bool == true })
        #expect(inputs[2]["address"] as? String == "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl")  // BIP84's first testnet address
        #expect((summary["outputs"] as? [[String: Any]])?.map { $0["change"] as? Bool } == [false, true])
        #expect(summary["fee"] as? Int == 1_000)
        #expect(summary["master_fingerprint"] as? String == "73c5da0a")

        let text = try Keyhost.run(["psbt", "inspect", "t.psbt", "--coin", "test"], cwd: dir)
        #expect(text.status == 0)
        #expect(text.stdout.contains("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl") && text.stdout.contains("fee 1000 sat"))

        let sign = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "signed.psbt"], cwd: dir, environment: Self.env)
        #expect(sign.status == 0, "\(sign.stderr)")
        #expect(sign.stderr.contains("signed 4 of 4 inputs"))
        #expect(!sign.stderr.contains("abandon") && !sign.stdout.contains("abandon"))
        let signed = try String(contentsOf: dir.appendingPathComponent("signed.psbt"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.expectVerified(signed, inputs: 4)

        let final = try Keyhost.run(["psbt", "finalize", "signed.psbt", "--json"], cwd: dir)
        #expect(final.status == 0, "\(final.stderr)")
        let result = try Self.json(final.stdout)
        let theirs = try Self.oracle("finalize", ["psbt": try #require(result["psbt"] as? String)])["tx"] as? String
        #expect(result["tx"] as? String == theirs)
        let extract = try Keyhost.run(["psbt", "finalize", "signed.psbt", "--extract"], cwd: dir)
        #expect(extract.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == theirs)
    }

    @Test("finalize --json answers complete: false for an incomplete PSBT, as finalizepsbt does, and exits 1 as the text form does")
    func finalizeIncompleteAsJSON() throws {
        let unsigned = try Self.make([Self.p2wpkh, Self.p2pkh])
        let dir = try Keyhost.scratch(["t.psbt": unsigned + "\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let answer = try Keyhost.run(["psbt", "finalize", "t.psbt", "--json", "-o", "out.psbt"], cwd: dir)
        // One exit status for both forms: an incomplete PSBT is not a transaction, so `finalize --json && broadcast` stops.
        #expect(answer.status == 1, "\(answer.stderr)")
        let result = try Self.json(answer.stdout)
        #expect(result["complete"] as? Bool == false)
        #expect(result["tx"] == nil)
        let left = try #require(result["incomplete"] as? [[String: Any]])
        #expect(left.map { $0["input"] as? Int } == [0, 1])
        #expect(left.allSatisfy { ($0["reason"] as? String)?.contains("no signature") == true }, "\(left)")
        #expect(result["psbt"] as? String == unsigned)
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.psbt").path))
        // Without --json it stays an error naming the input.
        let plain = try Keyhost.run(["psbt", "finalize", "t.psbt"], cwd: dir)
        #expect(plain.status == 1 && plain.stderr.contains("input 0"))

        let sign = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "s.psbt"], cwd: dir, environment: Self.env)
        #expect(sign.status == 0, "\(sign.stderr)")
        let complete = try Self.json(try Keyhost.run(["psbt", "finalize", "s.psbt", "--json"], cwd: dir).stdout)
        #expect(complete["complete"] as? Bool == true)
        #expect(complete["tx"] as? String != nil)
    }

    /// A multisig wallet's change (BDK's wsh(multi)/wsh(sortedmulti), and the sh forms) pays to a script of
    /// several keys, one of them ours: it is our change when that script hashes to the output.
    @Test("multisig change whose script holds our key and hashes to the output is our change", arguments: [
        ("wsh", true, false), ("wsh", false, false), ("sh-wsh", true, false), ("sh", true, false), ("wsh", true, true), ("sh", true, true),
    ])
    func multisigChange(kind: String, sorted: Bool, tampered: Bool) throws {
        let total = Self.p2wpkh["amount"] as? Int ?? 0
        let request: [String: Any] = ["mnemonic": Self.words, "inputs": [Self.p2wpkh], "outputs": [
            ["amount": total - 11_000],
            ["amount": 10_000, "multisig": ["path": "m/48h/1h/0h/2h/1/0", "kind": kind, "sorted": sorted, "tamper": tampered]],
        ]]
        let made = try PythonOracle.run("psbt_oracle.py", ["make"], input: try JSONSerialization.data(withJSONObject: request))
        let psbt = try #require(try Self.json(String(decoding: made, as: UTF8.self))["psbt"] as? String)
        let dir = try Keyhost.scratch(["m.psbt": psbt + "\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let inspect = try Keyhost.run(["psbt", "inspect", "m.psbt", "--coin", "test", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let summary = try Self.json(inspect.stdout)
        #expect((summary["outputs"] as? [[String: Any]])?.map { $0["change"] as? Bool } == [false, !tampered])
        let warned = (summary["warnings"] as? [String] ?? []).contains { $0.contains("not our change") }
        #expect(warned == tampered, "\(summary["warnings"] ?? [])")
    }

    @Test("binary in, binary out; - reads standard input and writes base64")
    func binaryAndStandardInput() throws {
        let unsigned = try Self.make([Self.p2wpkh])
        let bytes = try #require(Data(base64Encoded: unsigned))
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        try bytes.write(to: dir.appendingPathComponent("t.bin"))
        let sign = try Keyhost.run(["psbt", "sign", "t.bin", "--mnemonic-env", "WORDS", "-o", "s.bin"], cwd: dir, environment: Self.env)
        #expect(sign.status == 0, "\(sign.stderr)")
        let out = try Data(contentsOf: dir.appendingPathComponent("s.bin"))
        #expect(out.starts(with: [0x70, 0x73, 0x62, 0x74, 0xff]))
        try Self.expectVerified(out.base64EncodedString(), inputs: 1)
        let piped = try Keyhost.run(["psbt", "sign", "-", "--mnemonic-env", "WORDS"], stdin: unsigned, cwd: dir, environment: Self.env)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == out.base64EncodedString())
    }

    @Test("-o writes a new file whole, never over an existing one, and leaves no temporary file; a write that fails says why")
    func outputFiles() throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(try Self.make([Self.p2wpkh]).utf8).write(to: dir.appendingPathComponent("t.psbt"))
        try Data("old".utf8).write(to: dir.appendingPathComponent("old.psbt"))
        let kept = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "old.psbt", "--json"], cwd: dir, environment: Self.env)
        #expect(kept.status == 1)
        let exists = try #require((try Self.json(kept.stderr))["error"] as? [String: Any])
        #expect(exists["kind"] as? String == "file_exists")
        #expect((exists["message"] as? String)?.contains("old.psbt exists; keyhost never overwrites an output file") == true)
        #expect(try String(contentsOf: dir.appendingPathComponent("old.psbt"), encoding: .utf8) == "old")

        let sign = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "s.psbt"], cwd: dir, environment: Self.env)
        #expect(sign.status == 0, "\(sign.stderr)")
        // The note on standard error is not an error: no "keyhost:" prefix.
        #expect(sign.stderr.hasPrefix("signed 1 of 1 inputs into s.psbt"), "\(sign.stderr)")
        let written = try String(contentsOf: dir.appendingPathComponent("s.psbt"), encoding: .utf8)
        #expect(written.hasPrefix("cHNidP8") && written.hasSuffix("\n"))
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("s.psbt").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["old.psbt", "s.psbt", "t.psbt"])

        let missing = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "no/such/folder/s.psbt", "--json"],
                                      cwd: dir, environment: Self.env)
        #expect(missing.status == 1)
        let error = try #require((try Self.json(missing.stderr))["error"] as? [String: Any])
        #expect(error["kind"] as? String == "write_failed")
        #expect(error["message"] as? String == "cannot write no/such/folder/s.psbt: No such file or directory")
        let folder = try Keyhost.run(["psbt", "finalize", "s.psbt", "--extract", "-o", "."], cwd: dir)
        #expect(folder.status == 1)
        #expect(folder.stderr.contains(". exists; keyhost never overwrites"), "\(folder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["old.psbt", "s.psbt", "t.psbt"])
    }

    @Test("--card --reader virtual (4.0) signs every kind, taproot with Schnorr: one SIGN APDU per input")
    func softwareCard() throws {
        let unsigned = try Self.make([Self.p2pkh, Self.p2shP2wpkh, Self.p2wpkh, Self.p2tr])
        let dir = try Keyhost.scratch(["t.psbt": unsigned])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        let state = dir.appendingPathComponent("card.json").path
        try TokenCardCommandTests.cardState(state, applet: "4.0", seed: Self.words, home: dir)
        let sign = try Keyhost.run(["psbt", "sign", "t.psbt", "--card", "--reader", "virtual", "--card-state", state, "--json"], cwd: dir, environment: env)
        #expect(sign.status == 0, "\(sign.stderr)")
        let result = try Self.json(sign.stdout)
        #expect(result["signatures"] as? Int == 4)
        #expect(result["apdus"] as? Int == 4)
        try Self.expectVerified(try #require(result["psbt"] as? String), inputs: 4)
    }

    @Test("a 3.2 card signs the ECDSA inputs and lists the taproot one as skipped, with the reason")
    func appletWithoutSchnorr() throws {
        let dir = try Keyhost.scratch(["t.psbt": try Self.make([Self.p2wpkh, Self.p2tr]), "e.psbt": try Self.make([Self.p2wpkh, Self.p2pkh])])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        let state = dir.appendingPathComponent("card.json").path
        try TokenCardCommandTests.cardState(state, applet: "3.2", seed: Self.words, home: dir)
        let card = ["--card", "--reader", "virtual", "--card-state", state]
        let partly = try Keyhost.run(["psbt", "sign", "t.psbt", "--json"] + card, cwd: dir, environment: env)
        #expect(partly.status == 0, "\(partly.stderr)")
        let result = try Self.json(partly.stdout)
        #expect(result["complete"] as? Bool == false)
        #expect((result["signed"] as? [[String: Any]])?.map { $0["input"] as? Int } == [0])
        let skipped = try #require(result["skipped"] as? [[String: Any]])
        #expect(skipped.map { $0["input"] as? Int } == [1])
        #expect((skipped.first?["reason"] as? String)?.contains("Schnorr") == true)
        let partial = try #require(result["psbt"] as? String)
        let verified = try #require(try Self.oracle("verify", ["psbt": partial])["inputs"] as? [[String: Any]])
        #expect(verified.map { $0["signatures"] as? Int } == [1, 0])
        #expect(verified.allSatisfy { $0["valid"] as? Bool == true })
        let text = try Keyhost.run(["psbt", "sign", "t.psbt", "-o", "p.psbt"] + card, cwd: dir, environment: env)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.contains("signed 1 of 2 inputs into p.psbt; more signatures are needed"))
        #expect(text.stderr.contains("input 1 not signed: a taproot input"))
        let signed = try Keyhost.run(["psbt", "sign", "e.psbt", "--json"] + card, cwd: dir, environment: env)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(try Self.json(signed.stdout)["complete"] as? Bool == true)
        try Self.expectVerified(try #require(try Self.json(signed.stdout)["psbt"] as? String), inputs: 2)
    }

    static let errors: [(String, [String], Int32, String)] = [
        ("no key source", ["psbt", "sign", "t.psbt"], 1, "no mnemonic given"),
        ("mnemonic on the command line", ["psbt", "sign", "t.psbt", "--mnemonic", "abandon"], 64, "never taken on the command line"),
        ("two key sources", ["psbt", "sign", "t.psbt", "--card", "--mnemonic-env", "WORDS"], 64, "exclude each other"),
        ("bad sighash", ["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "--sighash", "MOST"], 64, "--sighash MOST"),
        ("not a PSBT", ["psbt", "inspect", "junk.txt"], 1, "not a PSBT"),
        ("missing file", ["psbt", "inspect", "nope.psbt"], 1, "nope.psbt"),
        ("unsigned finalize", ["psbt", "finalize", "t.psbt"], 1, "input 0"),
        ("witness_utxo only", ["psbt", "sign", "w.psbt", "--mnemonic-env", "WORDS"], 1, "--allow-witness-utxo"),
        ("PSBT forbids the sighash", ["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "--sighash", "NONE"], 1, "asks for sighash ALL on this input, not NONE"),
        ("another wallet's PSBT", ["psbt", "sign", "t.psbt", "--mnemonic-env", "OTHER"], 1, "no input was signed"),
    ]

    @Test("mistakes exit 64, refusals 1, each with a message naming the problem", arguments: 0..<errors.count)
    func errorCase(_ index: Int) throws {
        let (name, arguments, status, expected) = Self.errors[index]
        let forced = try Self.make([Self.p2wpkh], extra: ["sighash": 1])
        let dir = try Keyhost.scratch(["t.psbt": forced, "junk.txt": "hello", "w.psbt": try Self.make([Self.p2wpkh], extra: ["witness_utxo_only": true])])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["OTHER"] = "legal winner thank year wave sausage worth useful legal winner thank yellow"
        let run = try Keyhost.run(arguments, cwd: dir, environment: env)
        #expect(run.status == status, "\(name): \(run.stderr)")
        #expect(run.stderr.contains(expected), "\(name): \(run.stderr)")
        #expect(run.stdout.isEmpty, "\(name)")
        #expect(!run.stderr.contains("abandon") && !run.stderr.contains("legal winner"), "\(name): the mnemonic must never be printed")
    }

    @Test("--allow-witness-utxo signs what is otherwise refused, and --json errors carry kind and input")
    func witnessUTXOPolicy() throws {
        let dir = try Keyhost.scratch(["w.psbt": try Self.make([Self.p2wpkh], extra: ["witness_utxo_only": true])])
        defer { try? FileManager.default.removeItem(at: dir) }
        let refused = try Keyhost.run(["psbt", "sign", "w.psbt", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env)
        let error = try #require(try Self.json(refused.stderr)["error"] as? [String: Any])
        #expect(error["kind"] as? String == "psbt_signing")
        #expect(error["input"] as? Int == 0)
        let allowed = try Keyhost.run(["psbt", "sign", "w.psbt", "--mnemonic-env", "WORDS", "--allow-witness-utxo", "--json"], cwd: dir, environment: Self.env)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        try Self.expectVerified(try #require(try Self.json(allowed.stdout)["psbt"] as? String), inputs: 1)
    }

    @Test("examples/psbt_card.lua signs on the software card (4.0: all three inputs; 3.2: taproot skipped)")
    func example() throws {
        let modern = try Keyhost.run(["run", "examples/psbt_card.lua", "4.0"], environment: ["HOME": FileManager.default.temporaryDirectory.path])
        #expect(modern.status == 0, "\(modern.stderr)")
        #expect(modern.stdout.contains("signed input 2 (p2tr, DEFAULT)"))
        let old = try Keyhost.run(["run", "examples/psbt_card.lua", "3.2"], environment: ["HOME": FileManager.default.temporaryDirectory.path])
        #expect(old.status == 0, "\(old.stderr)")
        #expect(old.stdout.contains("skipped input 2: a taproot input") && old.stdout.contains("Schnorr"), "\(old.stdout)")
    }

    /// The names of a JSON value, recursively (object keys, and the first element's of arrays): the shape.
    static func shape(_ value: Any) -> [String] {
        if let object = value as? [String: Any] {
            return object.keys.sorted().flatMap { key in [key] + shape(object[key] as Any).map { key + "." + $0 } }
        }
        if let array = value as? [Any], let first = array.first { return shape(first).map { "[]." + $0 } }
        return []
    }

    @Test("docs/json.md's keyhost psbt examples have the names the commands print")
    func jsonDocumentation() throws {
        let text = try String(contentsOf: Keyhost.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## keyhost psbt\n").dropFirst().first).components(separatedBy: "\n## ").first ?? ""
        var examples: [String: Any] = [:]
        for block in section.components(separatedBy: "```json\n").dropFirst() {
            let body = block.components(separatedBy: "\n```").first ?? ""
            let lines = body.split(separator: "\n", maxSplits: 1).map(String.init)
            let command = try #require(lines.first?.hasPrefix("// ") == true ? lines.first.map { String($0.dropFirst(3)) } : nil, "\(body)")
            examples[command] = try JSONSerialization.jsonObject(with: Data((lines.count > 1 ? lines[1] : "").utf8))
        }
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let example = Keyhost.repository.appendingPathComponent("examples/data/psbt_card.psbt").path
        let signed = dir.appendingPathComponent("signed.psbt").path
        let runs: [(String, [String])] = [
            ("keyhost psbt inspect examples/data/psbt_card.psbt --coin test --mnemonic-env WORDS --json",
             ["psbt", "inspect", example, "--coin", "test", "--mnemonic-env", "WORDS", "--json"]),
            ("keyhost psbt sign examples/data/psbt_card.psbt --mnemonic-env WORDS --json", ["psbt", "sign", example, "--mnemonic-env", "WORDS", "--json", "-o", signed]),
            ("keyhost psbt finalize signed.psbt --json", ["psbt", "finalize", signed, "--json"]),
        ]
        for (command, arguments) in runs {
            let documented = try #require(examples[command], "docs/json.md has no example for \(command)")
            let run = try Keyhost.run(arguments, environment: Self.env)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            let actual = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
            #expect(Self.shape(documented) == Self.shape(actual), "\(command)")
        }
        let documentedIncomplete = try #require(examples["keyhost psbt finalize examples/data/psbt_card.psbt --json (unsigned)"] as? [String: Any])
        let incomplete = try Keyhost.run(["psbt", "finalize", example, "--json"])
        #expect(incomplete.status == 1, "\(incomplete.stderr)")  // printed, but not a finished transaction
        let answer = try Self.json(incomplete.stdout)
        #expect(answer["incomplete"] as? NSArray == documentedIncomplete["incomplete"] as? NSArray)
        #expect(answer["complete"] as? Bool == false)
        let shownPSBT = try #require(documentedIncomplete["psbt"] as? String)
        #expect((answer["psbt"] as? String)?.hasPrefix(String(shownPSBT.dropLast())) == true)
    }

    @Test("keyhost.psbt from Lua: structured errors (kind, input), options, finalize, extract, inspect")
    func luaModule() throws {
        let script = """
            local psbt, hd = require "keyhost.psbt", require "keyhost.hd"
            local f = assert(io.open("w.psbt", "rb")); local text = f:read("a"); f:close()
            local master <close> = hd.from_mnemonic("\(Self.words)")
            local ok, e = pcall(psbt.parse, "not a psbt")
            assert(not ok and e.kind == "invalid_psbt", tostring(e))
            local p = psbt.parse(text)
            assert(p:version() == 0 and not p:is_finalized())
            ok, e = pcall(p.sign, p, master)
            assert(not ok and e.kind == "psbt_signing" and e.input == 0, tostring(e))
            ok, e = pcall(p.sign, p, master:derive("m/84'"))
            assert(not ok and tostring(e):find("not a master key"), tostring(e))
            ok, e = pcall(p.sign, p, master, { sighash = "MOST" })
            assert(not ok and tostring(e):find("unknown type"), tostring(e))
            ok, e = pcall(p.sign, p, "key")
            assert(not ok and tostring(e):find("bad argument #1 to 'sign'") or tostring(e):find("expected"), tostring(e))
            local report = p:sign(master, { allow_witness_utxo = true })
            assert(report.signatures == 1 and report.signed[1].path == "m/84'/1'/0'/0/0" and report.signed[1].sighash == "ALL")
            ok, e = pcall(psbt.parse(text).finalize, psbt.parse(text))
            assert(not ok and e.kind == "psbt_finalize" and e.input == 0, tostring(e))
            assert(p:finalize() == p and p:is_finalized())
            assert(#p:extract() > 100 and p:txid():match("^%x+$"))
            local summary = p:inspect(master, { coin = "test" })
            assert(summary.inputs[1].finalized and not summary.inputs[1].ours and summary.fee == 1000)  -- finalizing drops the origins
            assert(psbt.parse(p:serialize()):base64() == p:base64())
            print("ok")
            """
        let dir = try Keyhost.scratch(["w.psbt": try Self.make([Self.p2wpkh], extra: ["witness_utxo_only": true]), "t.lua": script])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["run", "t.lua"], cwd: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "ok\n")
    }

    @Test("an origin naming our fingerprint with a path where the key is another is refused, by the mnemonic and by the card", arguments: ["mnemonic", "4.0", "3.2"])
    func mismatchedOrigin(_ signer: String) throws {
        var wrong = Self.p2wpkh
        wrong["origin_path"] = "m/84h/1h/0h/0/1"
        let dir = try Keyhost.scratch(["t.psbt": try Self.make([wrong])])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        var arguments = ["psbt", "sign", "t.psbt", "--json"]
        if signer == "mnemonic" {
            arguments += ["--mnemonic-env", "WORDS"]
        } else {
            let state = dir.appendingPathComponent("card.json").path
            try TokenCardCommandTests.cardState(state, applet: signer, seed: Self.words, home: dir)
            arguments += ["--card", "--reader", "virtual", "--card-state", state]
        }
        let run = try Keyhost.run(arguments, cwd: dir, environment: env)
        #expect(run.status == 1, "\(run.stderr)")
        let error = try #require(try Self.json(run.stderr)["error"] as? [String: Any])
        #expect(error["kind"] as? String == "psbt_signing")
        #expect(error["input"] as? Int == 0)
        #expect((error["message"] as? String)?.contains("[73c5da0a/84'/1'/0'/0/1]") == true, "\(error)")
        #expect(run.stdout.isEmpty)
    }

    @Test("combine: a signed copy and the unsigned PSBT merge into one that finalizes; another transaction's PSBT is refused")
    func combine() throws {
        let unsigned = try Self.make([Self.p2wpkh, Self.p2tr])
        let dir = try Keyhost.scratch(["t.psbt": unsigned])
        defer { try? FileManager.default.removeItem(at: dir) }
        // The BIP174 vectors check the merge itself (two signers' halves); this checks the command around it.
        let a = try Keyhost.run(["psbt", "sign", "t.psbt", "--mnemonic-env", "WORDS", "-o", "a.psbt"], cwd: dir, environment: Self.env)
        #expect(a.status == 0, "\(a.stderr)")
        let combined = try Keyhost.run(["psbt", "combine", "a.psbt", "t.psbt", "-o", "c.psbt"], cwd: dir)
        #expect(combined.status == 0, "\(combined.stderr)")
        let final = try Keyhost.run(["psbt", "finalize", "c.psbt", "--extract"], cwd: dir)
        #expect(final.status == 0, "\(final.stderr)")
        let other = try Self.make([Self.p2pkh])
        try other.write(to: dir.appendingPathComponent("o.psbt"), atomically: true, encoding: .utf8)
        let refused = try Keyhost.run(["psbt", "combine", "t.psbt", "o.psbt"], cwd: dir)
        #expect(refused.status == 1 && refused.stderr.contains("different transactions"), "\(refused.stderr)")
        let one = try Keyhost.run(["psbt", "combine", "t.psbt"], cwd: dir)
        #expect(one.status == 64)
    }
}
