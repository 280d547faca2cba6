import Foundation
import KeyhostTestSupport
import Testing

/// The Keycard commands keycard-cli has that keyhost's CLI gained (issue 20): the PIN-less path and PIN-less signing,
/// Schnorr signing, GET/STORE DATA, REMOVE KEY, private export on EIP-1581 paths, GENERATE MNEMONIC with LOAD KEY, and
/// INIT with secrets keyhost makes. Keys come from bip-utils, signatures are checked by coincurve
/// (Tests/Oracles/card_cli_oracle.py); each command runs on the software card as the applet sources define it.
@Suite struct KeycardCLIParityTests {
    typealias Bench = CardCommandTests.Bench
    static let words = CardCommandTests.words
    static let digest = CardCommandTests.digest

    /// A card initialised with the test PIN/PUK/password and the test mnemonic loaded.
    static func loaded(_ applet: String) throws -> Bench {
        let bench = try Bench()
        _ = try bench.json(["init", "--applet", applet])
        _ = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": words])
        return bench
    }

    /// `keyhost card …` with standard input, as `Bench.card` runs it.
    static func card(_ bench: Bench, _ arguments: [String], stdin: String, _ extra: [String: String] = [:]) throws -> KeyhostRun {
        try Keyhost.run(["card"] + arguments + ["--reader", "virtual", "--card-state", bench.state], stdin: stdin, cwd: bench.dir,
                        environment: bench.env.merging(extra) { $1 })
    }

    /// `keyhost card … --json` without `Bench.card`'s check for the test secrets: random secrets could hold one.
    static func generated(_ bench: Bench, _ arguments: [String]) throws -> KeyhostRun {
        let env = bench.env.filter { !["KEYHOST_PIN", "KEYHOST_PUK", "KEYHOST_PAIRING_PASSWORD"].contains($0.key) }
        return try Keyhost.run(["card"] + arguments + ["--reader", "virtual", "--card-state", bench.state], cwd: bench.dir, environment: env)
    }

    /// A bench whose host has never paired with the card: its own pairing store.
    static func stranger(_ bench: Bench) -> Bench {
        var other = bench
        other.env["XDG_STATE_HOME"] = bench.dir.appendingPathComponent("stranger-\(UUID().uuidString)").path
        return other
    }

    static func oracle(_ path: String, passphrase: String = "", words: String = Self.words) throws -> [String: String] {
        let line = try #require(PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["derive", words, passphrase, path])).first)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
    }

    // MARK: - PIN-less path and PIN-less signing

    /// set-pinless-path, then sign --pinless from a host that holds no pairing and knows neither PIN nor pairing
    /// password (SIGN P1 03 in clear, as the 3.2 applet allows); coincurve verifies and recovers the bip-utils key.
    @Test func pinlessPathSignsWithoutPINOrPairing() throws {
        let bench = try Self.loaded("3.2")
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let path = "m/44'/60'/0'/0/0"
        let want = try Self.oracle(path)
        let nobody: [String: String?] = ["KEYHOST_PIN": nil, "KEYHOST_PAIRING_PASSWORD": nil]
        let outsider = Self.stranger(bench)

        // None set yet: the error says how to set one, with the command line's command (not Lua's method).
        let unset = try outsider.error(["sign", "--pinless", Self.digest], nobody)
        #expect(unset["kind"] as? String == "not_found")
        #expect(unset["sw"] as? Int == 0x6A88)
        let hint = try #require(unset["message"] as? String)
        #expect(hint.contains("set one with 'keyhost card set-pinless-path --path m/…'") && !hint.contains("s:set_pinless_path"), "\(hint)")

        let set = try bench.json(["set-pinless-path", "--path", path])
        #expect(set["pinless_path"] as? String == path)
        let signed = try outsider.json(["sign", "--pinless", Self.digest], nobody)
        try CardCommandTests.checkDocumented(["set-pinless-path": set, "sign": signed])
        #expect(signed["path"] is NSNull)
        #expect(signed["public_key"] as? String == want["public_key"])
        let check = PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["verify", want["public_key"] ?? "", Self.digest, signed["rsv"] as? String ?? ""]))
        #expect(check == ["valid \(want["public_key"] ?? "")"])
        #expect(!FileManager.default.fileExists(atPath: (outsider.env["XDG_STATE_HOME"] ?? "") + "/keyhost/pairings.json"), "no pairing was made")
        let human = try outsider.card(["sign", "--pinless", Self.digest], nobody)
        #expect(human.status == 0 && human.stdout.hasPrefix("signature (r‖s‖v): ") && human.stdout.contains("public key: \(want["public_key"] ?? "")"),
                "\(human.stdout) \(human.stderr)")

        // --clear unsets it; the master key is never PIN-less; --path and --pinless exclude each other.
        #expect(try bench.json(["set-pinless-path", "--clear"])["pinless_path"] is NSNull)
        #expect(try outsider.error(["sign", "--pinless", Self.digest], nobody)["kind"] as? String == "not_found")
        for bad in [["set-pinless-path", "--path", "m"], ["set-pinless-path"], ["set-pinless-path", "--path", path, "--clear"],
                    ["sign", "--pinless", "--path", path, Self.digest], ["sign", Self.digest], ["sign", "--pinless", "--schnorr", Self.digest]] {
            #expect(try bench.error(bad, status: 64)["kind"] as? String == "usage", "\(bad)")
        }

        // Removing the key takes the PIN-less path with it (the applet's clearKeys).
        _ = try bench.json(["set-pinless-path", "--path", path])
        let keyUID = try #require(try bench.json(["status"])["key_uid"] as? String)
        _ = try bench.json(["remove-key", "--confirm", keyUID])
        _ = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": Self.words])
        #expect(try outsider.error(["sign", "--pinless", Self.digest], nobody)["kind"] as? String == "not_found")
    }

    /// 4.x has no SET PINLESS PATH: both commands say so, naming the applet, before any secret is asked.
    @Test func noPinlessPathOnApplet4() throws {
        let bench = try Self.loaded("4.0")
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        for command in [["set-pinless-path", "--path", "m/44'/60'/0'/0/0"], ["sign", "--pinless", Self.digest]] {
            let refused = try bench.error(command, ["KEYHOST_PIN": nil])
            #expect(refused["kind"] as? String == "unsupported", "\(command)")
            #expect((refused["message"] as? String)?.contains("applet 4.0 has no PIN-less path") == true, "\(refused)")
        }
    }

    // MARK: - Schnorr

    /// sign --schnorr on 4.x: a BIP340 signature coincurve verifies under the x-only key bip-utils derives; 3.x refuses
    /// before the PIN is asked.
    @Test func schnorrSignaturesVerifyUnderBIP340() throws {
        let bench = try Self.loaded("4.0")
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let path = "m/86'/0'/0'/0/0"
        let want = try Self.oracle(path)
        let signed = try bench.json(["sign", "--schnorr", "--path", path, Self.digest])
        #expect(Set(signed.keys) == ["path", "signature", "public_key", "x_only"])
        #expect(signed["path"] as? String == path)
        #expect(signed["public_key"] as? String == want["public_key"])
        #expect(signed["x_only"] as? String == want["x_only"])
        let signature = try #require(signed["signature"] as? String)
        #expect(signature.count == 128)
        let verdict = { (digest: String, signature: String) in
            PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["schnorr", want["x_only"] ?? "", digest, signature]))
        }
        #expect(try verdict(Self.digest, signature) == ["valid"])
        #expect(try verdict(String(repeating: "00", count: 32), signature) == ["invalid"], "the oracle must reject a signature of another digest")
        try CardCommandTests.checkDocumented(["sign --schnorr": signed])

        let human = try bench.card(["sign", "--schnorr", "--path", path, Self.digest])
        let lines = human.stdout.split(separator: "\n").map(String.init)
        #expect(human.status == 0 && lines.count == 2, "\(human.stdout) \(human.stderr)")
        #expect(lines.last == "x-only public key: \(want["x_only"] ?? "")")
        let humanSignature = String(lines.first?.dropFirst("signature (BIP340): ".count) ?? "")
        #expect(try verdict(Self.digest, humanSignature) == ["valid"])

        let old = try Self.loaded("3.2")
        defer { try? FileManager.default.removeItem(at: old.dir) }
        let refused = try old.error(["sign", "--schnorr", "--path", path, Self.digest], ["KEYHOST_PIN": nil])
        #expect(refused["kind"] as? String == "unsupported")
        #expect((refused["message"] as? String)?.contains("applet 3.2 signs with ECDSA only") == true, "\(refused)")
    }

    // MARK: - GET DATA and STORE DATA

    /// Public, cash and NDEF data round trips; GET DATA with no PIN (and on 3.x no pairing); the size limits of the
    /// applet's buffers refused before the PIN is asked; a factory reset erases the public data only.
    @Test(arguments: ["3.2", "4.0"])
    func dataRoundTrips(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        _ = try bench.json(["init", "--applet", applet])
        // 3.x answers GET DATA in clear: a host with no pairing and no password reads it.
        let reader = applet == "3.2" ? Self.stranger(bench) : bench
        let nobody: [String: String?] = ["KEYHOST_PIN": nil, "KEYHOST_PAIRING_PASSWORD": nil]
        func read(_ type: String) throws -> String? { try reader.json(["get-data", "--type", type], nobody)["data"] as? String }

        #expect(try read("public") == "")
        #expect(try read("cash") == "")
        #expect(try read("ndef") == "", "a blank NDEF file reads as an empty message")
        let empty = try reader.card(["get-data"], nobody)
        #expect(empty.status == 0 && empty.stdout.isEmpty && empty.stderr.contains("the card holds no public data"), "\(empty.stdout) \(empty.stderr)")

        let stored = try bench.json(["store-data", "--hex", "0x68656c6c6f"])
        #expect(stored["type"] as? String == "public" && stored["length"] as? Int == 5)
        try CardCommandTests.checkDocumented(["store-data": stored, "get-data": try reader.json(["get-data"], nobody)])
        #expect(try read("public") == "68656c6c6f")
        #expect(try reader.card(["get-data"], nobody).stdout == "68656c6c6f\n")

        // Cash data from a file, 127 bytes: the most the applet keeps.
        let cash = (0..<127).map { UInt8($0) }
        let cashFile = bench.dir.appendingPathComponent("cash.bin")
        try Data(cash).write(to: cashFile)
        _ = try bench.json(["store-data", "--type", "cash", "--file", cashFile.path])
        #expect(try read("cash") == cash.map { String(format: "%02x", $0) }.joined())

        // Too much is refused before the PIN is asked (no KEYHOST_PIN here).
        let tooMuch = try bench.error(["store-data", "--hex", String(repeating: "ab", count: 128)], ["KEYHOST_PIN": nil])
        #expect(tooMuch["kind"] as? String == "invalid_argument")
        #expect((tooMuch["message"] as? String)?.contains("at most 127 bytes of public data") == true, "\(tooMuch)")
        let tooLong = try bench.error(["store-data", "--type", "ndef", "--hex", String(repeating: "ab", count: 511)], ["KEYHOST_PIN": nil])
        #expect((tooLong["message"] as? String)?.contains("at most 510 bytes of NDEF message") == true, "\(tooLong)")

        // An NDEF URI record (NFC Forum RTD URI, prefix 04 = "https://"), short enough for one command.
        let uri = Array("keycard.tech/parity".utf8)
        let record: [UInt8] = [0xD1, 0x01, UInt8(uri.count + 1), 0x55, 0x04] + uri
        let recordFile = bench.dir.appendingPathComponent("record.ndef")
        try Data(record).write(to: recordFile)
        _ = try bench.json(["store-data", "--type", "ndef", "--file", recordFile.path])
        #expect(try read("ndef") == record.map { String(format: "%02x", $0) }.joined())
        // The card's file is the NFC Forum Type 4 NDEF file: its 2-byte length, then the message.
        let state = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bench.state))) as? [String: Any])
        #expect((state["ndefFile"] as? [Int])?.prefix(2 + record.count) == ArraySlice([0, record.count] + record.map(Int.init)))

        // A message longer than one command, from standard input; -o writes the bytes read back to a new 0600 file.
        let long = String(repeating: "keyhost NDEF ", count: 24)  // 312 bytes
        let piped = try Self.card(bench, ["store-data", "--type", "ndef", "-", "--json"], stdin: long)
        #expect(piped.status == 0, "\(piped.stderr)")
        let pipedJSON = try #require(try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any])
        #expect(pipedJSON["type"] as? String == "ndef" && pipedJSON["length"] as? Int == 312 && pipedJSON.count == 2)
        let out = bench.dir.appendingPathComponent("ndef.out").path
        if applet == "4.0" {
            let written = try reader.json(["get-data", "--type", "ndef", "-o", out], nobody)
            #expect(written["file"] as? String == out)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(long.utf8))
            #expect((try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int) == 0o600)
            #expect(try reader.error(["get-data", "--type", "ndef", "-o", out], nobody)["kind"] as? String == "file_exists")
        } else {
            // The 3.2 applet's GET DATA answers at most 223 bytes of the file: refused rather than cut.
            let cut = try reader.error(["get-data", "--type", "ndef"], nobody)
            #expect(cut["kind"] as? String == "unsupported")
            #expect((cut["message"] as? String)?.contains("an NDEF message of 312 bytes") == true, "\(cut)")
        }
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bench.state))) as? [String: Any])
        #expect((file["ndefFile"] as? [Int]).map { Array($0.prefix(314)) } == [1, 56] + Array(long.utf8).map(Int.init))

        for bad in [["store-data"], ["store-data", "--hex", "zz"], ["store-data", "--hex", "00", "--file", "x"], ["store-data", "x"],
                    ["get-data", "--type", "private"], ["store-data", "--type", "ndef!", "--hex", "00"]] {
            #expect(try bench.error(bad, status: 64)["kind"] as? String == "usage", "\(bad)")
        }

        // FACTORY RESET clears the applet's public data; the NDEF file and cash data belong to the card's other applets.
        let id = try #require(try bench.json(["info"])[applet == "3.2" ? "instance_uid" : "identity_public_key"] as? String)
        _ = try bench.json(["factory-reset", "--confirm", id])
        _ = try bench.json(["init"])
        #expect(try bench.json(["get-data"])["data"] as? String == "")
        #expect(try bench.json(["get-data", "--type", "cash"])["data"] as? String == cash.map { String(format: "%02x", $0) }.joined())
    }

    // MARK: - REMOVE KEY

    /// remove-key needs confirmation by key UID (or a terminal), as factory-reset does by card; the PIN and pairing stay.
    @Test(arguments: ["3.2", "4.0"])
    func removeKeyIsConfirmedByKeyUID(applet: String) throws {
        let bench = try Self.loaded(applet)
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let keyUID = try #require(try bench.json(["status"])["key_uid"] as? String)

        let unconfirmed = try bench.error(["remove-key"], ["KEYHOST_PIN": nil])
        #expect(unconfirmed["kind"] as? String == "not_confirmed")
        #expect((unconfirmed["message"] as? String)?.contains("--confirm <key UID>") == true)
        let other = try bench.error(["remove-key", "--confirm", String(repeating: "0", count: 64)], ["KEYHOST_PIN": nil])
        #expect(other["kind"] as? String == "not_confirmed")
        #expect(try bench.json(["status"])["has_master_key"] as? Bool == true)

        let removed = try bench.json(["remove-key", "--confirm", keyUID.uppercased()])
        #expect(removed["key_uid"] as? String == keyUID)
        #expect(removed["has_master_key"] as? Bool == false)
        try CardCommandTests.checkDocumented(["remove-key": removed])
        let status = try bench.json(["status"])
        #expect(status["has_master_key"] as? Bool == false && status["pin_retries"] as? Int == 3)
        #expect(try bench.error(["remove-key", "--confirm", keyUID])["kind"] as? String == "no_key")
        #expect(try bench.error(["export-key", "--path", "m/44'/60'/0'/0/0"])["kind"] as? String == "no_key")
    }

    // MARK: - Private keys on EIP-1581 paths

    /// export-key --private gives the bip-utils private key of an EIP-1581 path, on standard output or into a new 0600
    /// file; other paths are refused before a card is even opened; the key never reaches standard error.
    @Test(arguments: ["3.2", "4.0"])
    func privateKeysOnEIP1581PathsOnly(applet: String) throws {
        let bench = try Self.loaded(applet)
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let path = "m/43'/60'/1581'/0'/0"
        let want = try Self.oracle(path)
        let secret = try #require(want["private_key"])

        let exported = try bench.json(["export-key", "--private", "--path", path])
        #expect(exported["private_key"] as? String == secret)
        #expect(exported["public_key"] as? String == want["public_key"])
        #expect(exported["file"] is NSNull && exported["path"] as? String == path)
        try CardCommandTests.checkDocumented(["export-key --private": exported])
        let human = try bench.card(["export-key", "--private", "--path", path])
        #expect(human.status == 0 && human.stdout == secret + "\n" && !human.stderr.contains(secret), "\(human.stderr)")

        let file = bench.dir.appendingPathComponent("eip1581.key").path
        let written = try bench.card(["export-key", "--private", "--path", path, "-o", file])
        #expect(written.status == 0 && written.stdout.isEmpty && !written.stderr.contains(secret), "\(written.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == secret + "\n")
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let again = try bench.card(["export-key", "--private", "--path", path, "-o", file, "--json"])
        #expect(again.status == 1 && again.stdout.isEmpty && again.stderr.contains("file_exists") && !again.stderr.contains(secret), "\(again.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == secret + "\n")
        let json = bench.dir.appendingPathComponent("json.key").path
        let quiet = try bench.json(["export-key", "--private", "--path", path, "-o", json])
        #expect(quiet["private_key"] is NSNull && quiet["file"] as? String == json)

        // The applet's rule (KeycardApplet.isEIP1581): under m/43'/60'/1581', two levels down at least. Refused on the
        // command line, with no card state at all: nothing is sent.
        let blank = try Bench()
        defer { try? FileManager.default.removeItem(at: blank.dir) }
        for refused in ["m/44'/60'/0'/0/0", "m/43'/60'/1581'/0'", "m/43'/60'/1581'", "m/43'/60'/1582'/0'/0"] {
            let error = try blank.error(["export-key", "--private", "--path", refused], status: 64)
            #expect((error["message"] as? String)?.contains("EIP-1581 paths only") == true, "\(refused): \(error)")
        }
        for bad in [["export-key", "--private", "--extended", "--path", path], ["export-key", "--path", path, "-o", json + "2"]] {
            #expect(try bench.error(bad, status: 64)["kind"] as? String == "usage", "\(bad)")
        }
        // The software card refuses such a path itself, as the applet does (6985), when asked past the command line.
        let lua = try Keyhost.run(["run", "-"], stdin: """
            local card = require "keyhost.card"
            local s <close> = card.open { reader = "virtual", state = "\(bench.state)" }
            s:auto { pin = "\(CardCommandTests.pin)", pairing_password = "\(CardCommandTests.password)" }
            local ok, err = pcall(s.export_key, s, { path = "m/43'/60'/1581'/0'", kind = "private" })
            print(ok, err.kind, err.sw)
            """, cwd: bench.dir, environment: bench.env)
        #expect(lua.stdout == "false\tconditions_not_satisfied\t27013\n", "\(lua.stdout) \(lua.stderr)")
    }

    // MARK: - GENERATE MNEMONIC with LOAD KEY

    /// generate-mnemonic --load: the words printed are the card's key (bip-utils derives the same key from them, with
    /// the passphrase when given); the usual LOAD KEY guards hold before the PIN is asked.
    @Test(arguments: ["3.2", "4.0"])
    func generatedMnemonicIsLoaded(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        _ = try bench.json(["init", "--applet", applet])
        let path = "m/84'/0'/0'/0/0"

        let made = try bench.json(["generate-mnemonic", "--load", "--words", "24"])
        let phrase = try #require(made["mnemonic"] as? String)
        #expect(PythonOracle.lines(try PythonOracle.run("card_cli_oracle.py", ["mnemonic", phrase])) == ["valid 24"])
        #expect((made["indexes"] as? [Int])?.count == 24)
        #expect(made["key_uid"] as? String == (try bench.json(["status"])["key_uid"] as? String))
        try CardCommandTests.checkDocumented(["generate-mnemonic --load": made])
        let key = try bench.json(["export-key", "--path", path])["public_key"] as? String
        #expect(key == (try Self.oracle(path, words: phrase)["public_key"]))

        let kept = try bench.error(["generate-mnemonic", "--load"], ["KEYHOST_PIN": nil])
        #expect(kept["kind"] as? String == "has_key")
        let forgotten = try bench.error(["generate-mnemonic", "--load", "--replace"], ["KEYHOST_PIN": nil, "KEYHOST_PASSPHRASE": "TREZOR"])
        #expect((forgotten["message"] as? String)?.contains("--passphrase") == true)
        #expect(try bench.error(["generate-mnemonic", "--passphrase"], status: 64)["kind"] as? String == "usage")

        let human = try bench.card(["generate-mnemonic", "--load", "--replace", "--passphrase"], ["KEYHOST_PASSPHRASE": "TREZOR"])
        #expect(human.status == 0, "\(human.stderr)")
        let words = human.stdout.trimmingCharacters(in: .newlines)
        #expect(words.split(separator: " ").count == 12 && human.stderr.contains("they are its only backup"), "\(human.stderr)")
        let withPassphrase = try bench.json(["export-key", "--path", path])["public_key"] as? String
        #expect(withPassphrase == (try Self.oracle(path, passphrase: "TREZOR", words: words)["public_key"]))
        #expect(withPassphrase != (try Self.oracle(path, words: words)["public_key"]))
    }

    // MARK: - INIT with secrets keyhost makes

    /// init --generate-secrets: six and twelve digits (the PUK never starting with the PIN) and on 3.x a 16-character
    /// pairing password, printed once; the card takes exactly them (PIN verified, PUK unblocks, another host pairs).
    @Test(arguments: ["3.2", "4.0"])
    func generatedSecretsAreTheCards(applet: String) throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        // With secrets in the environment the user would believe the card holds theirs: refused (4.x takes no pairing password).
        let refused = try bench.error(["init", "--applet", applet, "--generate-secrets"])
        #expect(refused["kind"] as? String == "invalid_argument")
        let named = applet == "3.2" ? "KEYHOST_PIN, KEYHOST_PUK, KEYHOST_PAIRING_PASSWORD are set" : "KEYHOST_PIN, KEYHOST_PUK are set"
        #expect((refused["message"] as? String)?.contains(named) == true, "\(refused)")
        #expect(try bench.json(["info", "--applet", applet])["initialized"] as? Bool == false)

        let run = try Self.generated(bench, ["init", "--applet", applet, "--generate-secrets", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let made = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        try CardCommandTests.checkDocumented(["init --generate-secrets": made])
        let pin = try #require(made["pin"] as? String), puk = try #require(made["puk"] as? String)
        #expect(pin.count == 6 && pin.allSatisfy { $0.isASCII && $0.isNumber })
        #expect(puk.count == 12 && puk.allSatisfy { $0.isASCII && $0.isNumber } && !puk.hasPrefix(pin))
        var env: [String: String?] = ["KEYHOST_PIN": pin, "KEYHOST_PUK": puk, "KEYHOST_PAIRING_PASSWORD": nil]
        if applet == "3.2" {
            let password = try #require(made["pairing_password"] as? String)
            #expect(password.count == 16 && password.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            #expect(made["pairing_index"] as? Int == 0)
            // Another host pairs with the password printed.
            env["KEYHOST_PAIRING_PASSWORD"] = password
            #expect(try Self.stranger(bench).json(["pair"], env)["new_pairing"] as? Bool == true)
        } else {
            #expect(made["pairing_password"] is NSNull)
        }
        #expect(try bench.json(["verify-pin"], env)["verified"] as? Bool == true)
        // The PUK printed unblocks the PIN.
        for _ in 0..<3 { _ = try bench.card(["verify-pin"], ["KEYHOST_PIN": pin == "000000" ? "111111" : "000000"]) }
        #expect(try bench.error(["verify-pin"], env)["kind"] as? String == "pin_blocked")
        env["KEYHOST_NEW_PIN"] = pin
        #expect(try bench.json(["unblock-pin"], env)["pin_retries"] as? Int == 3)

        // Human output: the secrets once, on standard output, and a reminder on standard error.
        let other = try Bench()
        defer { try? FileManager.default.removeItem(at: other.dir) }
        let human = try Self.generated(other, ["init", "--applet", applet, "--generate-secrets"])
        #expect(human.status == 0, "\(human.stderr)")
        let lines = human.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == (applet == "3.2" ? 4 : 3) && lines[1].hasPrefix("PIN: ") && lines[2].hasPrefix("PUK: "), "\(human.stdout)")
        if applet == "3.2" { #expect(lines[3].hasPrefix("pairing password: ")) }
        #expect(human.stderr.contains("printed once and kept nowhere"))
    }

    /// A 3.x card that took generated secrets and then could not be paired (here: the pairing store cannot be written)
    /// still has its secrets printed, with the error: without them it could only be factory reset.
    @Test func generatedSecretsSurviveAFailedPairing() throws {
        let bench = try Bench()
        defer { try? FileManager.default.removeItem(at: bench.dir) }
        let blocker = bench.dir.appendingPathComponent("not-a-folder")
        try Data().write(to: blocker)
        var unwritable = bench
        unwritable.env["XDG_STATE_HOME"] = blocker.appendingPathComponent("state").path
        let failed = try Self.generated(unwritable, ["init", "--applet", "3.2", "--generate-secrets", "--json"])
        #expect(failed.status == 1)
        let made = try #require(try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [String: Any], "\(failed.stdout) \(failed.stderr)")
        #expect(made["pairing_index"] is NSNull)
        #expect((try JSONSerialization.jsonObject(with: Data(failed.stderr.utf8)) as? [String: Any])?["error"] != nil, "\(failed.stderr)")
        let pin = try #require(made["pin"] as? String), password = try #require(made["pairing_password"] as? String)
        #expect(try bench.json(["verify-pin"], ["KEYHOST_PIN": pin, "KEYHOST_PAIRING_PASSWORD": password])["verified"] as? Bool == true)
    }
}
