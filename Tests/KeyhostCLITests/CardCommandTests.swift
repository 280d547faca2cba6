import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost card …` end to end through the built binary, against the software card (`--reader virtual --card-state FILE`).
/// Keys are compared with bip-utils and signatures verified with coincurve (Tests/Oracles/card_cli_oracle.py).
@Suite struct CardCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    static let pin = "123456", puk = "987654321098", password = "KeycardTest"
    static let secrets = [pin, puk, password, "654321", "111111", "222222222222", "NewPairing9", "246810"]

    /// A scratch folder with its own pairing store, and the card state file in it.
    struct Bench {
        let dir: URL
        let state: String
        var env: [String: String]

        init() throws {
            dir = try Keyhost.scratch([:])
            state = dir.appendingPathComponent("card.json").path
            env = ["HOME": dir.path, "XDG_STATE_HOME": dir.appendingPathComponent("state").path,
                   "KEYHOST_PIN": CardCommandTests.pin, "KEYHOST_PUK": CardCommandTests.puk,
                   "KEYHOST_PAIRING_PASSWORD": CardCommandTests.password]
        }

        /// `keyhost card COMMAND ARGS… --reader virtual --card-state FILE`, with `env` plus `extra`.
        func card(_ arguments: [String], _ extra: [String: String?] = [:]) throws -> KeyhostRun {
            // nil: the variable is empty, which keyhost treats as unset.
            var environment = env
            for (key, value) in extra { environment[key] = value ?? "" }
            let run = try Keyhost.run(["card"] + arguments + ["--reader", "virtual", "--card-state", state], cwd: dir,
                                      environment: environment)
            for secret in CardCommandTests.secrets where !(arguments.first == "generate-mnemonic") {
                #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret), "a secret was printed by \(arguments)")
            }
            return run
        }

        /// The command's JSON object; the command must succeed.
        func json(_ arguments: [String], _ extra: [String: String?] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
            let run = try card(arguments + ["--json"], extra)
            #expect(run.status == 0, "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
            return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], sourceLocation: sourceLocation)
        }

        /// The `{"error": {…}}` object of a command that fails with exit status `status`.
        func error(_ arguments: [String], _ extra: [String: String?] = [:], status: Int32 = 1,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
            let run = try card(arguments + ["--json"], extra)
            #expect(run.status == status, "\(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stderr.utf8)) as? [String: Any], sourceLocation: sourceLocation)
            return try #require(object["error"] as? [String: Any], sourceLocation: sourceLocation)
        }
    }

    /// bip-utils' public key, chain code, xpub and zpub of the test mnemonic at `paths`.
    static func oracleKeys(_ paths: [String]) throws -> [String: [String: String]] {
        let lines = PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["derive", words, ""] + paths))
        var keys: [String: [String: String]] = [:]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            keys[object["path"] ?? ""] = object
        }
        return keys
    }

    static let digest = "6c1a5fd2a0d11bbd3a5e1c6b4f4f0bd0fa0fd7ca6ab7c2e5cdbd2ab3dd1a8c47"

    @Test(arguments: ["3.2", "4.0"])
    func everydayCommandsOnTheSoftwareCard(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        var outputs: [String: [String: Any]] = [:]

        // Commands other than init and info refuse a state file that does not exist (a typo would make a blank card).
        let missing = try bench.error(["status"])
        #expect(missing["kind"] as? String == "not_found")
        #expect((missing["message"] as? String)?.contains("keyhost card init --reader virtual --card-state") == true)
        let blankInfo = try bench.json(["info", "--applet", applet])
        #expect(blankInfo["initialized"] as? Bool == false)
        #expect(!FileManager.default.fileExists(atPath: bench.state), "info must not create the state file")

        // A PUK that starts with the PIN would let a 3.2 card's default duress PIN be the PIN: refused, card left blank.
        let badPUK = try bench.error(["init", "--applet", applet], ["KEYHOST_PUK": "123456000000"])
        #expect(badPUK["kind"] as? String == "invalid_argument")
        #expect((badPUK["message"] as? String)?.contains("PUK starts with the PIN") == true)

        // init from nothing.
        let initialised = try bench.json(["init", "--applet", applet])
        outputs["init"] = initialised
        #expect(initialised["applet"] as? String == applet)
        // The card's identity for --confirm: its instance UID, or on 4.x (no instance UID) its identity public key.
        let uid: String
        if applet == "3.2" {
            uid = try #require(initialised["instance_uid"] as? String)
            #expect(uid.count == 32)
            #expect(initialised["identity_public_key"] is NSNull)
            #expect(initialised["pairing_index"] is Int)
            #expect(initialised["secure_channel"] as? Int == 1)
        } else {
            uid = try #require(initialised["identity_public_key"] as? String)
            #expect(uid.count == 66)
            #expect(initialised["instance_uid"] is NSNull)
            #expect(initialised["pairing_index"] is NSNull)
            #expect(initialised["secure_channel"] as? Int == 2)
        }
        let again = try bench.error(["init"])
        #expect(again["kind"] as? String == "already_initialized")

        let info = try bench.json(["info"])
        #expect(info["initialized"] as? Bool == true)
        #expect(info[applet == "3.2" ? "instance_uid" : "identity_public_key"] as? String == uid)
        #expect(info["applet"] as? String == applet)
        outputs["info"] = info

        // status needs no PIN.
        let status = try bench.json(["status"], ["KEYHOST_PIN": nil])
        outputs["status"] = status
        #expect(status["pin_retries"] as? Int == 3)
        #expect(status["puk_retries"] as? Int == 5)
        #expect(status["has_master_key"] as? Bool == false)
        #expect(status["key_uid"] is NSNull)
        #expect(status["path"] is NSNull)

        // pair: the pairing made by init is kept (no second slot); 4.x cards do not pair.
        if applet == "3.2" {
            let paired = try bench.json(["pair"])
            outputs["pair"] = paired
            #expect(paired["new_pairing"] as? Bool == false)
            #expect(paired["pairing_index"] as? Int == initialised["pairing_index"] as? Int)
            #expect(paired["instance_uid"] as? String == uid)
        } else {
            let refused = try bench.error(["pair"], ["KEYHOST_PAIRING_PASSWORD": nil])
            #expect(refused["kind"] as? String == "unsupported")
            #expect((refused["message"] as? String)?.contains("does not pair") == true)
        }

        let verified = try bench.json(["verify-pin"])
        outputs["verify-pin"] = verified
        #expect(verified["verified"] as? Bool == true)
        #expect(verified["pin_retries"] as? Int == 3)

        // Keys: before any, export refuses; then the BIP39 test mnemonic.
        let noKey = try bench.error(["export-key", "--path", "m/44'/60'/0'/0/0"])
        #expect(noKey["kind"] as? String == "no_key")
        let loaded = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": Self.words])
        outputs["load-seed"] = loaded
        let keyUID = try #require(loaded["key_uid"] as? String)
        #expect(keyUID.count == 64)
        let replaced = try bench.error(["load-seed"], ["KEYHOST_MNEMONIC": Self.words])
        #expect(replaced["kind"] as? String == "has_key")
        // KEYHOST_PASSPHRASE is honoured as by every command that takes a mnemonic (another wallet, another key UID);
        // --no-passphrase ignores it and loads the plain wallet again.
        let withPassphrase = try bench.json(["load-seed", "--replace"], ["KEYHOST_MNEMONIC": Self.words, "KEYHOST_PASSPHRASE": "x"])
        #expect(withPassphrase["key_uid"] as? String != keyUID)
        let plain = try bench.json(["load-seed", "--replace", "--no-passphrase"], ["KEYHOST_MNEMONIC": Self.words, "KEYHOST_PASSPHRASE": "x"])
        #expect(plain["key_uid"] as? String == keyUID)
        let loadedStatus = try bench.json(["status"])
        #expect(loadedStatus["has_master_key"] as? Bool == true)
        #expect(loadedStatus["key_uid"] as? String == keyUID)

        // export-key against bip-utils; on 4.0 this also proves the PIN opened the real wallet, not the duress one.
        let oracle = try Self.oracleKeys(["m/44'/60'/0'/0/0", "m/84'/0'/0'"])
        let eth = try bench.json(["export-key", "--path", "m/44'/60'/0'/0/0"])
        outputs["export-key"] = eth
        #expect(eth["public_key"] as? String == oracle["m/44'/60'/0'/0/0"]?["public_key"])
        #expect(eth["path"] as? String == "m/44'/60'/0'/0/0")
        #expect(eth["chain_code"] is NSNull && eth["xpub"] is NSNull)
        let account = try bench.json(["export-key", "--path", "m/84'/0'/0'", "--extended"])
        #expect(account["xpub"] as? String == oracle["m/84'/0'/0'"]?["xpub"])
        #expect(account["chain_code"] as? String == oracle["m/84'/0'/0'"]?["chain_code"])
        #expect(account["public_key"] as? String == oracle["m/84'/0'/0'"]?["public_key"])
        let zpub = try bench.json(["export-key", "--path", "m/84'/0'/0'", "--extended", "--family", "zpub"])
        #expect(zpub["xpub"] as? String == oracle["m/84'/0'/0'"]?["zpub"])

        // sign, verified and recovered by coincurve.
        let signed = try bench.json(["sign", "--path", "m/44'/60'/0'/0/0", Self.digest])
        outputs["sign"] = signed
        #expect(signed["public_key"] as? String == oracle["m/44'/60'/0'/0/0"]?["public_key"])
        let rsv = try #require(signed["rsv"] as? String)
        #expect(rsv == (signed["r"] as? String ?? "") + (signed["s"] as? String ?? "") + String(format: "%02x", signed["v"] as? Int ?? 0))
        let check = PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["verify", signed["public_key"] as? String ?? "", Self.digest, rsv]))
        #expect(check == ["valid \(oracle["m/44'/60'/0'/0/0"]?["public_key"] ?? "")"])

        // generate-mnemonic prints words python-mnemonic accepts.
        let generated = try bench.json(["generate-mnemonic", "--words", "24"], ["KEYHOST_PIN": nil])
        outputs["generate-mnemonic"] = generated
        let phrase = try #require(generated["mnemonic"] as? String)
        #expect((generated["indexes"] as? [Int])?.count == 24)
        #expect(PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["mnemonic", phrase])) == ["valid 24"])

        // change-pin; the old PIN is then wrong (kind wrong_pin, retries_left), the new one right.
        outputs["change-pin"] = try bench.json(["change-pin"], ["KEYHOST_NEW_PIN": "654321"])
        let wrong = try bench.error(["verify-pin"])
        #expect(wrong["kind"] as? String == "wrong_pin")
        #expect(wrong["retries_left"] as? Int == 2)
        #expect(wrong["command"] as? String == "VERIFY PIN")
        #expect(try bench.json(["verify-pin"], ["KEYHOST_PIN": "654321"])["pin_retries"] as? Int == 3)

        // Block the PIN, then unblock it with the PUK (a wrong PUK first).
        for left in [2, 1] { #expect(try bench.error(["verify-pin"], ["KEYHOST_PIN": "111111"])["retries_left"] as? Int == left) }
        let blocked = try bench.error(["verify-pin"], ["KEYHOST_PIN": "111111"])
        #expect(["wrong_pin", "pin_blocked"].contains(blocked["kind"] as? String ?? ""))
        #expect(blocked["retries_left"] as? Int == 0)
        let stillBlocked = try bench.error(["verify-pin"], ["KEYHOST_PIN": "654321"])
        #expect(stillBlocked["kind"] as? String == "pin_blocked")
        #expect((stillBlocked["message"] as? String)?.contains("keyhost card unblock-pin") == true)
        let wrongPUK = try bench.error(["unblock-pin"], ["KEYHOST_PUK": "222222222222", "KEYHOST_NEW_PIN": "654321"])
        #expect(wrongPUK["kind"] as? String == "wrong_puk")
        #expect(wrongPUK["retries_left"] as? Int == 4)
        let unblocked = try bench.json(["unblock-pin"], ["KEYHOST_NEW_PIN": "654321"])
        outputs["unblock-pin"] = unblocked
        #expect(unblocked["pin_retries"] as? Int == 3)
        #expect(try bench.json(["verify-pin"], ["KEYHOST_PIN": "654321"])["verified"] as? Bool == true)

        outputs["change-puk"] = try bench.json(["change-puk"], ["KEYHOST_PIN": "654321", "KEYHOST_NEW_PUK": "222222222222"])

        if applet == "3.2" {
            // A new pairing password; then free this host's slot: the next command pairs again, with the new password only.
            outputs["change-pairing-password"] = try bench.json(["change-pairing-password"],
                                                                 ["KEYHOST_PIN": "654321", "KEYHOST_NEW_PAIRING_PASSWORD": "NewPairing9"])
            let own = try #require(initialised["pairing_index"] as? Int)
            let unpaired = try bench.json(["unpair"], ["KEYHOST_PIN": "654321"])
            outputs["unpair"] = unpaired
            #expect(unpaired["unpaired"] as? [Int] == [own])
            #expect(unpaired["forgot_stored_pairing"] as? Bool == true)
            let oldPassword = try bench.error(["status"])
            #expect(oldPassword["kind"] as? String == "wrong_pairing_password")
            let repaired = try bench.json(["pair"], ["KEYHOST_PAIRING_PASSWORD": "NewPairing9"])
            #expect(repaired["new_pairing"] as? Bool == true)
            #expect(try bench.json(["status"], ["KEYHOST_PAIRING_PASSWORD": nil])["pin_retries"] as? Int == 3)
        } else {
            let refused = try bench.error(["unpair"], ["KEYHOST_PIN": nil])
            #expect(refused["kind"] as? String == "unsupported")
        }

        // generate-key replaces the key only when asked to.
        let generated2 = try bench.json(["generate-key", "--replace"], ["KEYHOST_PIN": "654321"])
        outputs["generate-key"] = generated2
        #expect((generated2["key_uid"] as? String).map { $0.count == 64 && $0 != keyUID } == true)

        // factory-reset: refused without confirmation (no terminal here) or with another card's UID; done with it.
        let unconfirmed = try bench.error(["factory-reset"])
        #expect(unconfirmed["kind"] as? String == "not_confirmed")
        #expect((unconfirmed["message"] as? String)?.contains("--confirm <instance UID>") == true)
        let otherUID = try bench.error(["factory-reset", "--confirm", String(repeating: "0", count: uid.count)])
        #expect(otherUID["kind"] as? String == "not_confirmed")
        #expect(try bench.json(["info"])["initialized"] as? Bool == true)
        let reset = try bench.json(["factory-reset", "--confirm", uid.uppercased()])
        outputs["factory-reset"] = reset
        #expect(reset["initialized"] as? Bool == false)
        #expect(reset[applet == "3.2" ? "instance_uid" : "identity_public_key"] as? String == uid)
        #expect(try bench.json(["info"])["initialized"] as? Bool == false)

        if applet == "3.2" { try Self.checkDocumented(outputs, error: wrong) }
    }

    /// docs/json.md's `## keyhost card` examples: each parses, and has exactly the names the command printed. `outputs`
    /// are keyed by the heading's command after `keyhost card `, flags included (`sign --schnorr`).
    static func checkDocumented(_ outputs: [String: [String: Any]], error: [String: Any]? = nil) throws {
        let text = try String(contentsOf: Keyhost.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## keyhost card\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        if let error {
            let errorExample = try #require(section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first)
            let errorObject = try #require(try JSONSerialization.jsonObject(with: Data(errorExample.utf8)) as? [String: Any])
            #expect(Set((errorObject["error"] as? [String: Any] ?? [:]).keys) == Set(error.keys))
        }
        var documented: [String: [String: Any]] = [:]
        for part in section.components(separatedBy: "\n### `keyhost card ").dropFirst() {
            let command = String(part.prefix { $0 != "`" })
            let block = try #require(part.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first,
                                     "no JSON example for \(command)")
            documented[command] = try #require(try JSONSerialization.jsonObject(with: Data(block.utf8)) as? [String: Any], "\(command)'s example")
        }
        for (command, output) in outputs {
            let example = try #require(documented[command], "docs/json.md has no example for keyhost card \(command)")
            #expect(Set(example.keys) == Set(output.keys), "keyhost card \(command): documented \(example.keys.sorted()), printed \(output.keys.sorted())")
        }
    }

    /// `init --duress-pin`: the user's PIN opens the real wallet (bip-utils' keys), the duress PIN the decoy;
    /// a duress PIN equal to the PIN is refused before anything is sent.
    @Test(arguments: ["3.2", "4.0"])
    func duressPINOpensTheDecoyOnly(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let same = try bench.error(["init", "--applet", applet, "--duress-pin"], ["KEYHOST_DURESS_PIN": Self.pin])
        #expect(same["kind"] as? String == "invalid_argument")
        #expect((same["message"] as? String)?.contains("duress PIN (KEYHOST_DURESS_PIN) equals the PIN") == true)
        _ = try bench.json(["init", "--applet", applet, "--duress-pin"], ["KEYHOST_DURESS_PIN": "246810"])
        _ = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": Self.words])
        let path = "m/44'/60'/0'/0/0"
        let want = try #require(try Self.oracleKeys([path])[path]?["public_key"])
        #expect(try bench.json(["export-key", "--path", path])["public_key"] as? String == want)
        let decoy = try bench.json(["export-key", "--path", path], ["KEYHOST_PIN": "246810"])["public_key"] as? String
        #expect(decoy != nil && decoy != want)
    }

    /// Pairings go to the pairing store (0600) and are reused; `unpair` frees slots, and forgets the stored one when it was ours.
    @Test func pairingSlotsAreReusedAndFreed() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        var other = bench
        other.env["XDG_STATE_HOME"] = bench.dir.appendingPathComponent("other-host").path
        func freeSlots() throws -> Int? { try bench.json(["info"])["free_pairing_slots"] as? Int }

        let own = try #require(try bench.json(["init", "--applet", "3.2"])["pairing_index"] as? Int)
        #expect(try freeSlots() == 9)
        for _ in 0..<3 { _ = try bench.json(["verify-pin"]) }
        #expect(try freeSlots() == 9, "a stored pairing is reused, not a new slot taken")
        let store = bench.dir.appendingPathComponent("state/keyhost/pairings.json").path
        let attributes = try FileManager.default.attributesOfItem(atPath: store)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let stored = try String(contentsOfFile: store, encoding: .utf8)
        #expect(!stored.contains(Self.password) && !stored.contains(Self.pin))

        let second = try other.json(["pair"])
        #expect(second["new_pairing"] as? Bool == true)
        let theirs = try #require(second["pairing_index"] as? Int)
        #expect(theirs != own)
        #expect(try freeSlots() == 8)

        let freed = try bench.json(["unpair", "--others"])
        #expect((freed["unpaired"] as? [Int])?.contains(theirs) == true)
        #expect((freed["unpaired"] as? [Int])?.contains(own) == false)
        #expect(freed["forgot_stored_pairing"] as? Bool == false)
        #expect(try freeSlots() == 9)

        // The other host's stored pairing is rejected now: it is dropped and the card paired again.
        let again = try other.json(["pair"])
        #expect(again["new_pairing"] as? Bool == true)
        let index = try #require(again["pairing_index"] as? Int)
        let one = try bench.json(["unpair", "--index", String(index)])
        #expect(one["unpaired"] as? [Int] == [index])
        #expect(one["forgot_stored_pairing"] as? Bool == false)
        let mine = try bench.json(["unpair"])
        #expect(mine["unpaired"] as? [Int] == [own])
        #expect(mine["forgot_stored_pairing"] as? Bool == true)
        #expect(try freeSlots() == 10)
    }

    @Test func secretsAreNeverOptions() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        for (command, option) in [("verify-pin", "--pin"), ("init", "--puk"), ("pair", "--pairing-password"), ("change-pin", "--new-pin"),
                                  ("load-seed", "--mnemonic"), ("load-seed", "--passphrase=x"), ("unblock-pin", "--puk")] {
            let run = try bench.card([command, option, "123456"])
            #expect(run.status == 64, "\(command) \(option): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: bench.state))
        }
    }

    @Test func missingSecretNamesTheVariable() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        #expect(try bench.json(["init", "--applet", "4.0"])["applet"] as? String == "4.0")
        let noPIN = try bench.error(["verify-pin"], ["KEYHOST_PIN": nil])
        #expect(noPIN["kind"] as? String == "no_secret")
        #expect((noPIN["message"] as? String)?.contains("KEYHOST_PIN") == true)
        let noNewPIN = try bench.card(["change-pin"], ["KEYHOST_NEW_PIN": nil])
        #expect(noNewPIN.status == 1)
        #expect(noNewPIN.stderr.contains("KEYHOST_NEW_PIN"), "\(noNewPIN.stderr)")
        let noMnemonic = try bench.card(["load-seed"], ["KEYHOST_MNEMONIC": nil])
        #expect(noMnemonic.status == 1)
        #expect(noMnemonic.stderr.contains("KEYHOST_MNEMONIC"), "\(noMnemonic.stderr)")
        let badMnemonic = try bench.error(["load-seed"], ["KEYHOST_MNEMONIC": "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon"])
        #expect(badMnemonic["kind"] as? String == "invalid_mnemonic")
        #expect(!(badMnemonic["message"] as? String ?? "").contains("abandon"))
        // An applet mismatch with an existing state file is refused.
        let mismatch = try bench.error(["info", "--applet", "3.2"])
        #expect((mismatch["message"] as? String)?.contains("holds applet 4.0") == true)
    }

    @Test func badOptionValuesAreUsageErrors() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let cases: [[String]] = [
            ["sign", "--path", "m/44'/60'/0'/0/0", "abcd"],
            ["sign", "--path", "m/44'/60'/0'/0/0", "zz" + String(repeating: "0", count: 62)],
            ["sign", "--path", "44'/60'", Self.digest],
            ["export-key", "--path", "m/x"],
            ["export-key", "--path", "m/0", "--family", "zpub"],
            ["export-key", "--path", "m/0", "--extended", "--family", "qpub"],
            ["generate-mnemonic", "--words", "13"],
            ["init", "--pin-retries", "99"],
            ["init", "--applet", "5.0"],
            ["unpair", "--index", "300"],
        ]
        for arguments in cases {
            let run = try bench.card(arguments + ["--json"])
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(run.stderr.utf8)) as? [String: Any]
            #expect((object?["error"] as? [String: Any])?["kind"] as? String == "usage", "\(arguments): \(run.stderr)")
        }
        // --card-state alone names the software card; with a real reader it is a mistake.
        let stray = try Keyhost.run(["card", "status", "--reader", "0", "--card-state", bench.state], cwd: bench.dir, environment: bench.env)
        #expect(stray.status == 64)
        #expect(stray.stderr.contains("--card-state is the software card's state file: it goes with --reader virtual"))
    }

    @Test func humanOutput() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let initialised = try bench.card(["init", "--applet", "3.2"])
        #expect(initialised.status == 0, "\(initialised.stderr)")
        #expect(initialised.stdout.hasPrefix("initialised the card (applet 3.2, instance UID "))
        #expect(initialised.stdout.contains("paired in slot 0"))
        let status = try bench.card(["status"])
        #expect(status.stdout == "applet 3.2, PIN tries left 3, PUK tries left 5, no key loaded\n")
        let wrong = try bench.card(["verify-pin"], ["KEYHOST_PIN": "000000"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "keyhost: wrong PIN: 2 tries left (SW 63C2 from VERIFY PIN)\n")
    }
}
