import Foundation
import KeyhostTestSupport
import Testing

/// Card commands that must behave alike whatever opens the card: the master's extended key (which no Keycard
/// gives correctly), cards certified by another CA (`--trusted-ca` everywhere), and pairing slots running out.
@Suite struct CardParityTests {
    typealias Bench = CardCommandTests.Bench
    static let words = CardCommandTests.words

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    // MARK: - The master's extended public key

    /// A real 3.2 applet answers EXPORT KEY of m with the chain code of the key it derived last (the software 3.2
    /// card does the same); 4.0 refuses it. keyhost refuses it on both, saying why, instead of printing a wrong xpub;
    /// the master's public key, and keys below it, still come out right (bip-utils).
    @Test(arguments: ["3.2", "4.0"])
    func masterExtendedKeyIsRefusedNotWrong(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        _ = try bench.json(["init", "--applet", applet])
        _ = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": Self.words])
        let oracle = try CardCommandTests.oracleKeys(["m", "m/84'/1'", "m/84'/1'/0'"])
        let master = try #require(oracle["m"]?["xpub"])

        let account = try bench.json(["export-key", "--path", "m/84'/1'/0'", "--extended"])
        #expect(account["xpub"] as? String == oracle["m/84'/1'/0'"]?["xpub"])
        let refused = try bench.card(["export-key", "--path", "m", "--extended", "--json"])
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(!refused.stdout.contains("pub"), "no extended key may be printed: \(refused.stdout)")
        let error = try #require(try Self.json(refused.stderr)["error"] as? [String: Any])
        #expect(error["kind"] as? String == "unsupported")
        let message = try #require(error["message"] as? String)
        #expect(message.contains("master key's extended public key (m)") && message.contains("Export an account's extended key"), "\(message)")
        if applet == "3.2" { #expect(message.contains("chain code of the key it derived last")) }

        // Without the chain code the master's key is right.
        let plain = try bench.json(["export-key", "--path", "m"])
        #expect(plain["public_key"] as? String == oracle["m"]?["public_key"])

        // keyhost key over the card: the xpub of m is refused too; addresses right below m come out as the mnemonic's.
        var env = bench.env
        env["KEYHOST_MNEMONIC"] = Self.words
        let card = ["--card", "--reader", "virtual", "--card-state", bench.state]
        let xpub = try Keyhost.run(["key", "xpub", "--path", "m"] + card, cwd: bench.dir, environment: bench.env)
        #expect(xpub.status == 1 && !xpub.stdout.contains(master) && xpub.stderr.contains("master key's extended public key"), "\(xpub.stdout) \(xpub.stderr)")
        let fromCard = try Keyhost.run(["key", "address", "--path", "m/0", "--index", "0-2", "--kind", "p2wpkh"] + card, cwd: bench.dir, environment: bench.env)
        let fromWords = try Keyhost.run(["key", "address", "--path", "m/0", "--index", "0-2", "--kind", "p2wpkh"], cwd: bench.dir, environment: env)
        #expect(fromCard.status == 0 && fromWords.status == 0, "\(fromCard.stderr) \(fromWords.stderr)")
        #expect(fromCard.stdout == fromWords.stdout)
    }

    // MARK: - Cards certified by another CA

    /// Every command that opens a card takes --trusted-ca; without it a 4.0 card whose identity certificate another
    /// CA signed is refused with a message naming the option and that CA's key, with it the command works.
    @Test func everyCardCommandTakesTrustedCA() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let blank = bench.dir.appendingPathComponent("blank.json").path
        // A blank 4.0 card, then its certificate re-signed by another CA (as if personalised by someone else).
        let made = try Keyhost.run(["run", "-"], stdin: "require('keyhost.card').open { reader = 'virtual', state = '\(blank)', applet = '4.0' }:close()",
                                   environment: bench.env)
        #expect(made.status == 0, "\(made.stderr)")
        let ca = try #require(PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["recertify", blank, String(repeating: "42", count: 32)])).first)
        try FileManager.default.copyItem(atPath: blank, toPath: bench.state)

        let env = bench.env.merging(["KEYHOST_MNEMONIC": Self.words, "WORDS": Self.words]) { $1 }
        let unsigned = try PSBTCommandTests.make([PSBTCommandTests.p2wpkh])
        try unsigned.write(to: bench.dir.appendingPathComponent("t.psbt"), atomically: true, encoding: .utf8)
        try EthCommandTests.tx1559.write(to: bench.dir.appendingPathComponent("tx.json"), atomically: true, encoding: .utf8)
        let virtual = ["--reader", "virtual", "--card-state", bench.state]
        let commands: [[String]] = [
            ["card", "init"] + virtual,
            ["card", "load-seed"] + virtual,
            ["card", "status"] + virtual,
            ["card", "export-key", "--path", "m/44'/60'/0'/0/0"] + virtual,
            ["key", "xpub", "--card"] + virtual,
            ["psbt", "sign", "t.psbt", "--card"] + virtual,
            ["eth", "sign-tx", "tx.json", "--card"] + virtual,
            ["token", "wallet", "init", "--wallet", "w.db", "--card", "--path", "m/44'/60'/0'/0/0"] + virtual,
            ["discover", "--card", "virtual", "--card-state", bench.state, "--source", "index:/dev/null", "--gap-limit", "1"],
        ]
        for command in commands {
            let refused = try Keyhost.run(command, cwd: bench.dir, environment: env)
            #expect(refused.status != 0, "\(command)")
            #expect(refused.stderr.contains("certificate signed by unknown CA \(ca)") && refused.stderr.contains("--trusted-ca KEY: --trusted-ca \(ca)"),
                    "\(command): \(refused.stderr)")
            let trusted = try Keyhost.run(command + ["--trusted-ca", ca], cwd: bench.dir, environment: env)
            #expect(!trusted.stderr.contains("untrusted") && !trusted.stderr.contains("usage"), "\(command): \(trusted.stderr)")
            if command.first != "discover" { #expect(trusted.status == 0, "\(command): \(trusted.stderr)") }
        }
        // A bad key is a usage error, and the option belongs with a card.
        let bad = try Keyhost.run(["card", "status", "--trusted-ca", "02abcd"] + virtual, environment: env)
        #expect(bad.status == 64 && bad.stderr.contains("--trusted-ca needs a certificate authority's public key"), "\(bad.stderr)")
        let loose = try Keyhost.run(["key", "xpub", "--trusted-ca", ca], environment: env)
        #expect(loose.status == 64 && loose.stderr.contains("--trusted-ca go with --card"), "\(loose.stderr)")
    }

    /// Lua's card.open takes the same trust (trusted_ca_keys); its error names that option and the CA.
    @Test func luaOpenTakesTrustedCAKeys() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let made = try Keyhost.run(["run", "-"], stdin: "require('keyhost.card').open { reader = 'virtual', state = '\(bench.state)', applet = '4.0' }:close()",
                                   environment: bench.env)
        #expect(made.status == 0, "\(made.stderr)")
        let ca = try #require(PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["recertify", bench.state, String(repeating: "42", count: 32)])).first)
        let run = try Keyhost.run(["run", "-"], stdin: """
            local card, hex = require "keyhost.card", require "keyhost.hex"
            local ok, err = pcall(function() card.open { reader = "virtual", state = "\(bench.state)" }:open_secure_channel() end)
            print(err.kind, hex.encode(err.ca_key), tostring(err))
            local s = card.open { reader = "virtual", state = "\(bench.state)", trusted_ca_keys = { hex.decode "\(ca)" } }
            s:open_secure_channel()
            print("open")
            """, environment: bench.env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("untrusted_card\t\(ca)\t") && run.stdout.contains("trusted_ca_keys = { hex.decode \"\(ca)\" }"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("open\n"))
    }

    // MARK: - Pairing slots

    /// A new pairing says which slot it took and how many are left; when none is left the command fails naming
    /// unpair --others and factory reset; unpair --others reports only the slots that were in use.
    @Test func pairingSlotsAreCountedAndRunOut() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        func host(_ n: Int) -> Bench {
            var other = bench
            other.env["XDG_STATE_HOME"] = bench.dir.appendingPathComponent("host\(n)").path
            return other
        }
        let initialised = try bench.card(["init", "--applet", "3.2"])
        #expect(initialised.status == 0, "\(initialised.stderr)")
        #expect(initialised.stderr.contains("this host now holds its pairing slot 0; 9 pairing slots are left free"), "\(initialised.stderr)")

        // A second host: its first command takes a slot, and says so; the next one reuses it quietly.
        let second = try host(2).card(["status"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("pairing slot 1; 8 pairing slots are left free"), "\(second.stderr)")
        #expect(try host(2).card(["status"]).stderr.isEmpty)

        // Nobody else paired: --others frees the second host's slot only, not every index.
        let freed = try bench.json(["unpair", "--others"])
        #expect(freed["unpaired"] as? [Int] == [1])
        #expect(try bench.json(["unpair", "--others"])["unpaired"] as? [Int] == [])

        // Hosts 2…10 fill the other nine slots; the eleventh is refused, with what to do.
        for n in 2...10 {
            let run = try host(n).card(["status"])
            #expect(run.status == 0 && run.stderr.contains("this host now holds its pairing slot"), "\(n): \(run.stderr)")
        }
        #expect(try bench.json(["info"])["free_pairing_slots"] as? Int == 0)
        let eleventh = try host(11).error(["status"])
        #expect(eleventh["kind"] as? String == "no_free_slot")
        let message = try #require(eleventh["message"] as? String)
        #expect(message.contains("keyhost card unpair --others") && message.contains("factory reset"), "\(message)")

        // The eleventh host can still free the others (through the card's temporary slot): all ten were in use.
        let cleared = try host(11).card(["unpair", "--others", "--json"], ["KEYHOST_PIN": CardCommandTests.pin])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        #expect(try Self.json(cleared.stdout)["unpaired"] as? [Int] == Array(0...9))
        #expect(try bench.json(["info"])["free_pairing_slots"] as? Int == 10)
    }

    /// Lua's `s:unpair_others` and `keyhost card unpair --others` follow one rule (CardSession.unpairOthers): only the
    /// slots in use are freed and reported, not every index the card has. Lua's session is open already, so after finding
    /// the slots it verifies the PIN again (here from KEYHOST_PIN).
    @Test func luaUnpairOthersReportsOnlyTheSlotsInUse() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        #expect(try bench.card(["init", "--applet", "3.2"]).status == 0)
        var second = bench
        second.env["XDG_STATE_HOME"] = bench.dir.appendingPathComponent("host2").path
        #expect(try second.card(["status"]).status == 0)
        // This host's stored pairing (slot 0) opens Lua's session; slot 1 is the second host's, slots 2…9 are free.
        let run = try Keyhost.run(["run", "-"], stdin: """
            local s <close> = require("keyhost.card").open { reader = "virtual", state = "\(bench.state)" }
            local r = s:auto {}
            local freed = s:unpair_others()
            print(r.pairing_index, table.concat(freed, ","), s:select().free_pairing_slots)
            """, environment: bench.env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "0\t1\t9\n", "\(run.stdout)")
        #expect(!run.stdout.contains(CardCommandTests.pin) && !run.stderr.contains(CardCommandTests.pin))
        #expect(try bench.json(["unpair", "--others"])["unpaired"] as? [Int] == [])
    }
}
