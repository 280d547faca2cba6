import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost key …` end to end through the binary, against independent implementations (bip-utils, coincurve,
/// eth-account) in Tests/Oracles/key_oracle.py.
@Suite struct KeyCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    static let env = ["KEYHOST_MNEMONIC": words]
    static let cardEnv = ["KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"]

    static func key(_ arguments: [String], env: [String: String] = env, stdin: String? = nil, cwd: URL? = nil) throws -> KeyhostRun {
        try Keyhost.run(["key"] + arguments, stdin: stdin, cwd: cwd, environment: env)
    }

    static func oracle(_ operation: String, _ request: Any) throws -> Any {
        let input = try JSONSerialization.data(withJSONObject: request)
        return try JSONSerialization.jsonObject(with: PythonOracle.run("key_oracle.py", [operation], input: input))
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    /// A JSON value written with sorted keys, to compare documents.
    static func canonical(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    /// The oracle's standard wallets (p2pkh, p2sh-p2wpkh, p2wpkh, p2tr, ethereum on btc/eth, p2wpkh on test and ltc).
    static func wallets(_ mnemonic: String, passphrase: String = "", count: Int) throws -> [[String: Any]] {
        let answer = try #require(try oracle("wallets", ["cases": [["mnemonic": mnemonic, "passphrase": passphrase]], "count": count]) as? [[[String: Any]]])
        return try #require(answer.first)
    }

    /// Compares keyhost's addresses (default path, --count) and account xpub with one oracle wallet.
    static func expectWallet(_ wallet: [String: Any], env: [String: String], extra: [String] = []) throws {
        let kind = try #require(wallet["kind"] as? String), coin = try #require(wallet["coin"] as? String)
        let expected = try #require(wallet["addresses"] as? [String])
        let addresses = try key(["address", "--coin", coin, "--kind", kind, "--count", String(expected.count)] + extra, env: env)
        #expect(addresses.status == 0, "\(addresses.stderr)")
        #expect(lines(addresses.stdout) == expected, "\(coin) \(kind)")
        let xpub = try key(["xpub", "--coin", coin, "--kind", kind] + extra, env: env)
        #expect(xpub.status == 0, "\(xpub.stderr)")
        #expect(xpub.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == wallet["xpub"] as? String, "\(coin) \(kind) xpub")
    }

    // MARK: - Addresses and xpubs

    @Test func testMnemonicAddressesAndXpubsMatchBipUtils() throws {
        for wallet in try Self.wallets(Self.words, count: 3) {
            try Self.expectWallet(wallet, env: Self.env)
        }
        // The kind and coin follow the path when not named; the default is btc's first native segwit address.
        let byPath = try Self.key(["address", "--path", "m/86'/0'/0'/0/1"])
        #expect(byPath.stdout == "bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh\n", "\(byPath.stderr)")
        let plain = try Self.key(["address"])
        #expect(plain.stdout == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\n")
        let eth = try Self.key(["address", "--path", "m/44'/60'/0'/0/0"])
        #expect(eth.stdout == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94\n")
    }

    @Test func randomMnemonicsAndPassphrasesMatchBipUtils() throws {
        let cases = try #require(try Self.oracle("random-wallets", ["count": 3, "seed": 1204]) as? [[String: Any]])
        #expect(cases.count == 3)
        for item in cases {
            let mnemonic = try #require(item["mnemonic"] as? String), passphrase = try #require(item["passphrase"] as? String)
            var env = ["SEED_WORDS": mnemonic]
            var extra = ["--mnemonic-env", "SEED_WORDS"]
            if !passphrase.isEmpty {
                env["SEED_PASS"] = passphrase
                extra += ["--passphrase-env", "SEED_PASS"]
            }
            for wallet in try #require(item["wallets"] as? [[String: Any]]) {
                try Self.expectWallet(wallet, env: env, extra: extra)
            }
        }
    }

    @Test func jsonAddressesCarryPathKindCoinAndPublicKey() throws {
        let one = try Self.object(try Self.key(["address", "--json"]).stdout)
        #expect(one["address"] as? String == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
        #expect(one["path"] as? String == "m/84'/0'/0'/0/0")
        #expect(one["kind"] as? String == "p2wpkh")
        #expect(one["coin"] as? String == "BTC")
        #expect(one["public_key"] as? String == "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")

        let run = try Self.key(["address", "--coin", "eth", "--index", "3-5", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]], "\(run.stderr)")
        #expect(rows.map { $0["path"] as? String } == ["m/44'/60'/0'/0/3", "m/44'/60'/0'/0/4", "m/44'/60'/0'/0/5"])
        #expect(rows.allSatisfy { $0["kind"] as? String == "ethereum" && $0["coin"] as? String == "ETH" })
        let counted = try Self.key(["address", "--coin", "eth", "--index", "3", "--count", "3"])
        #expect(Self.lines(counted.stdout) == rows.compactMap { $0["address"] as? String })
    }

    @Test func xpubSourceDerivesPubliclyAndRefusesWhatItCannot() throws {
        let wallets = try Self.wallets(Self.words, count: 4)
        let segwit = try #require(wallets.first { $0["kind"] as? String == "p2wpkh" && $0["coin"] as? String == "btc" })
        let zpub = try #require(segwit["xpub"] as? String)
        // zpub names the kind; the path is relative to the account key.
        let run = try Self.key(["address", "--xpub", zpub, "--count", "4"], env: [:])
        #expect(Self.lines(run.stdout) == segwit["addresses"] as? [String], "\(run.stderr)")
        let json = try Self.object(try Self.key(["address", "--xpub", zpub, "--path", "0/2", "--json"], env: [:]).stdout)
        #expect(json["path"] as? String == "0/2")
        #expect(json["address"] as? String == (segwit["addresses"] as? [String])?[2])

        // A plain xpub does not name a kind: that must be said, not guessed.
        let legacy = try #require(wallets.first { $0["kind"] as? String == "p2pkh" })
        let xpub = try #require(legacy["xpub"] as? String)
        let unknown = try Self.key(["address", "--xpub", xpub], env: [:])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--kind"), "\(unknown.stderr)")
        let named = try Self.key(["address", "--xpub", xpub, "--kind", "p2pkh", "--count", "4"], env: [:])
        #expect(Self.lines(named.stdout) == legacy["addresses"] as? [String], "\(named.stderr)")

        let hardened = try Self.key(["address", "--xpub", zpub, "--path", "0'/1"], env: [:])
        #expect(hardened.status == 64)
        #expect(hardened.stderr.contains("hardened step 0'"), "\(hardened.stderr)")
        let absolute = try Self.key(["address", "--xpub", zpub, "--path", "m/84'/0'/0'/0/0"], env: [:])
        #expect(absolute.status == 64)
        #expect(absolute.stderr.contains("relative"), "\(absolute.stderr)")

        // The same key in another family; and the account xpub from the mnemonic as the xpub command prints it.
        let rewritten = try Self.key(["xpub", "--xpub", zpub, "--family", "xpub"], env: [:])
        let fromMnemonic = try Self.key(["xpub", "--path", "m/84'/0'/0'", "--family", "xpub"])
        #expect(rewritten.stdout == fromMnemonic.stdout, "\(rewritten.stderr)")
        let cannotSign = try Self.key(["sign-message", "hi", "--xpub", zpub], env: [:])
        #expect(cannotSign.status == 64)
        #expect(cannotSign.stderr.contains("cannot sign"))
    }

    @Test func xpubJSONGivesTheKeyOrigin() throws {
        let run = try Self.key(["xpub", "--json"])
        let json = try Self.object(run.stdout)
        #expect(json["xpub"] as? String == "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs")
        #expect(json["path"] as? String == "m/84'/0'/0'")
        #expect(json["family"] as? String == "zpub")
        // The BIP39 test mnemonic's master fingerprint is well known from wallets and descriptors.
        #expect(json["master_fingerprint"] as? String == "73c5da0a")
        let tpub = try Self.object(try Self.key(["xpub", "--coin", "test", "--json"]).stdout)
        #expect(tpub["family"] as? String == "vpub")
        #expect(tpub["path"] as? String == "m/84'/1'/0'")
    }

    // MARK: - Signed messages

    @Test(arguments: ["p2pkh", "p2sh-p2wpkh", "p2wpkh"])
    func bitcoinSignaturesVerifyIndependently(kind: String) throws {
        let message = "keyhost ✓ signs \(kind)\nsecond line"
        let signed = try Self.key(["sign-message", "--kind", kind, "--json", message])
        #expect(signed.status == 0, "\(signed.stderr)")
        let json = try Self.object(signed.stdout)
        let address = try #require(json["address"] as? String), signature = try #require(json["signature"] as? String)
        let expectedPath = ["p2pkh": "m/44'/0'/0'/0/0", "p2sh-p2wpkh": "m/49'/0'/0'/0/0", "p2wpkh": "m/84'/0'/0'/0/0"][kind]
        #expect(json["path"] as? String == expectedPath)
        #expect(json["kind"] as? String == kind)
        let first = try Self.wallets(Self.words, count: 1).first { $0["kind"] as? String == kind }
        #expect(address == (first?["addresses"] as? [String])?.first)

        let check = try #require(try Self.oracle("btc-verify", ["message_hex": Data(message.utf8).map { String(format: "%02x", $0) }.joined(),
                                                                  "signature": signature, "address": address, "coin": "btc"]) as? [String: Any])
        #expect(check["valid"] as? Bool == true, "recovered \(check["recovered_address"] ?? "nothing")")

        let verified = try Self.key(["verify-message", address, signature, message], env: [:])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.hasPrefix("valid"))
        let tampered = try Self.key(["verify-message", address, signature, message + "!"], env: [:])
        #expect(tampered.status == 1)
        #expect(tampered.stdout.hasPrefix("invalid"))

        // The message from standard input and from a file gives the same signature (RFC 6979 is deterministic).
        let piped = try Self.key(["sign-message", "--kind", kind, "-"], stdin: message)
        #expect(piped.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == signature)
        let dir = try Keyhost.scratch(["m.txt": message])
        defer { try? FileManager.default.removeItem(at: dir) }
        let filed = try Self.key(["verify-message", address, signature, "--file", dir.appendingPathComponent("m.txt").path], env: [:])
        #expect(filed.status == 0, "\(filed.stderr)")
    }

    @Test(arguments: [("p2pkh", "btc", "m/44'/0'/0'/0/3"), ("p2sh-p2wpkh", "test", "m/49'/1'/0'/1/0"), ("p2wpkh", "ltc", "m/84'/2'/0'/0/9")])
    func bitcoinSignaturesMadeElsewhereVerify(kind: String, coin: String, path: String) throws {
        let message = "made by coincurve for \(coin)"
        let made = try #require(try Self.oracle("btc-sign", ["mnemonic": Self.words, "path": path, "kind": kind, "coin": coin,
                                                              "message_hex": Data(message.utf8).map { String(format: "%02x", $0) }.joined()]) as? [String: Any])
        let address = try #require(made["address"] as? String), theirs = try #require(made["signature"] as? String)
        #expect(try Self.key(["address", "--path", path, "--coin", coin]).stdout == address + "\n")
        let verified = try Self.key(["verify-message", address, theirs, message], env: [:])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        let other = try Self.key(["verify-message", address, theirs, "another message"], env: [:])
        #expect(other.status == 1, "\(other.stdout)\(other.stderr)")
        // RFC 6979 on both sides: keyhost's own signature is the same bytes.
        let ours = try Self.key(["sign-message", "--path", path, "--coin", coin, message])
        #expect(ours.stdout == theirs + "\n", "\(ours.stderr)")
    }

    @Test func ethereumSignaturesMatchEthAccount() throws {
        let message = "Sign in to keyhost: nonce 42"
        let signed = try Self.key(["sign-message", "--coin", "eth", "--json", message])
        #expect(signed.status == 0, "\(signed.stderr)")
        let json = try Self.object(signed.stdout)
        let signature = try #require(json["signature"] as? String)
        #expect(signature.hasPrefix("0x") && signature.count == 132)
        #expect(json["address"] as? String == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
        let recovered = try #require(try Self.oracle("eth-recover", ["message": message, "signature": signature]) as? [String: Any])
        #expect(recovered["address"] as? String == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")

        // eth-account's own signature of another message, at another path, checked by keyhost.
        let other = "made by eth-account"
        let made = try #require(try Self.oracle("eth-sign", ["mnemonic": Self.words, "path": "m/44'/60'/0'/0/7", "message": other]) as? [String: Any])
        let address = try #require(made["address"] as? String), theirs = try #require(made["signature"] as? String)
        let ours = try Self.key(["address", "--coin", "eth", "--index", "7"])
        #expect(ours.stdout == address + "\n")
        let verified = try Self.key(["verify-message", address, theirs, other], env: [:])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        let verifiedJSON = try Self.object(try Self.key(["verify-message", address.lowercased(), theirs, other, "--json"], env: [:]).stdout)
        #expect(verifiedJSON["valid"] as? Bool == true)
        let wrong = try Self.key(["verify-message", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", theirs, other], env: [:])
        #expect(wrong.status == 1)
        #expect(wrong.stdout.contains("recovers to \(address)"), "\(wrong.stdout)")
        // Both sides sign deterministically (RFC 6979), so the signatures are the same bytes.
        let same = try Self.key(["sign-message", "--path", "m/44'/60'/0'/0/7", other])
        #expect(same.stdout == theirs + "\n")
        // --hex signs the bytes the text encodes, from the argument or standard input.
        let hex = "0x" + Data(other.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(try Self.key(["sign-message", "--path", "m/44'/60'/0'/0/7", "--hex", hex]).stdout == theirs + "\n")
        #expect(try Self.key(["verify-message", address, theirs, "--hex", "-"], env: [:], stdin: hex + "\n").status == 0)
        #expect(try Self.key(["sign-message", "--coin", "eth", "--hex", "0x123"]).status == 64)
        #expect(try Self.key(["sign-message", "--coin", "eth", "--hex", "-"], stdin: "not hex").status == 64)
    }

    @Test func malformedVerifyInputIsAUsageError() throws {
        let cases: [[String]] = [
            ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "not base64!", "m"],
            ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyX", "H" + String(repeating: "A", count: 87), "m"],
            ["0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "0x1234", "m"],
            ["0x9858efFD232B4033E47d90003D41EC34EcaEda94", "0x" + String(repeating: "11", count: 65), "m"],
            ["bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr", "H" + String(repeating: "A", count: 87), "m"],
            ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "H" + String(repeating: "A", count: 87)],
        ]
        for arguments in cases {
            let run = try Self.key(["verify-message"] + arguments, env: [:])
            #expect(run.status == 64, "\(arguments): \(run.stdout)\(run.stderr)")
        }
    }

    // MARK: - The card

    @Test(arguments: ["3.2", "4.0"])
    func softwareCardGivesTheMnemonicsAddressesAndSignatures(applet: String) throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("card.json").path
        try TokenCardCommandTests.cardState(state, applet: applet, seed: Self.words, home: dir)
        var env = Self.cardEnv
        env["HOME"] = dir.path
        let card = ["--card", "--reader", "virtual", "--card-state", state]

        for options in [["--count", "3"], ["--coin", "eth", "--index", "0-2"], ["--path", "m/49'/0'/0'/0/5'"], ["--kind", "p2tr", "--count", "2"]] {
            let fromCard = try Self.key(["address"] + options + card, env: env)
            #expect(fromCard.status == 0, "\(options): \(fromCard.stderr)")
            let fromWords = try Self.key(["address"] + options)
            #expect(fromCard.stdout == fromWords.stdout, "\(options)")
        }
        let xpubCard = try Self.key(["xpub", "--json"] + card, env: env)
        #expect(xpubCard.status == 0, "\(xpubCard.stderr)")
        #expect(try Self.canonical(Self.object(xpubCard.stdout)) == Self.canonical(Self.object(try Self.key(["xpub", "--json"]).stdout)))

        // Bitcoin: the card signs the message hash; keyhost adds the header from the recovered key.
        let message = "signed on a card"
        let btc = try Self.object(try Self.key(["sign-message", "--json", message] + card, env: env).stdout)
        let signature = try #require(btc["signature"] as? String), address = try #require(btc["address"] as? String)
        #expect(address == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
        let check = try #require(try Self.oracle("btc-verify", ["message_hex": Data(message.utf8).map { String(format: "%02x", $0) }.joined(),
                                                                  "signature": signature, "address": address, "coin": "btc"]) as? [String: Any])
        #expect(check["valid"] as? Bool == true)
        // Ethereum.
        let eth = try Self.object(try Self.key(["sign-message", "--coin", "eth", "--json", message] + card, env: env).stdout)
        #expect(eth["address"] as? String == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
        let recovered = try #require(try Self.oracle("eth-recover", ["message": message, "signature": eth["signature"] ?? ""]) as? [String: Any])
        #expect(recovered["address"] as? String == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")

        // Without a PIN and without a terminal to ask on (setsid -w: a new session), the card is not opened.
        let noPIN = try Keyhost.run(["-w", Keyhost.binary.path, "key", "address"] + card, environment: ["HOME": dir.path, "KEYHOST_PIN": ""],
                                    executable: URL(fileURLWithPath: "/usr/bin/setsid"))
        #expect(noPIN.status == 1)
        #expect(noPIN.stderr.contains("KEYHOST_PIN"), "\(noPIN.stderr)")
        for output in [xpubCard] { #expect(!output.stdout.contains("123456") && !output.stderr.contains("123456")) }
    }

    // MARK: - Mnemonics

    @Test(arguments: [12, 15, 18, 21, 24])
    func newMnemonicsAreValid(count: Int) throws {
        let made = try Self.key(["mnemonic", "new", "--words", String(count)], env: [:])
        #expect(made.status == 0, "\(made.stderr)")
        let phrase = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(phrase.split(separator: " ").count == count)
        let bip = try #require(try Self.oracle("mnemonic-valid", ["mnemonic": phrase]) as? [String: Any])
        #expect(bip["valid"] as? Bool == true)
        let checked = try Self.key(["mnemonic", "check"], env: ["KEYHOST_MNEMONIC": phrase])
        #expect(checked.status == 0)
        #expect(checked.stdout == "valid: \(count) words, BIP39 checksum correct\n")
        let again = try Self.key(["mnemonic", "new", "--words", String(count)], env: [:])
        #expect(again.stdout != made.stdout)
    }

    @Test func mnemonicCheckSaysWhyWithoutShowingTheWords() throws {
        let checksum = Array(repeating: "abandon", count: 12).joined(separator: " ")
        let bad = try Self.key(["mnemonic", "check", "--json"], env: ["KEYHOST_MNEMONIC": checksum])
        #expect(bad.status == 1)
        #expect(try Self.object(bad.stdout)["problem"] as? String == "checksum")
        #expect(!bad.stdout.contains("abandon") && !bad.stderr.contains("abandon"))

        let typo = Self.words.replacingOccurrences(of: "about", with: "abuot")
        let unknown = try Self.key(["mnemonic", "check", "-"], env: [:], stdin: typo)
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("word 12 is not in the BIP39 English wordlist"), "\(unknown.stdout)")
        #expect(!unknown.stdout.contains("abuot") && !unknown.stdout.contains("about") && !unknown.stdout.contains("abandon"))
        let suggested = try Self.object(try Self.key(["mnemonic", "check", "--stdin", "--suggest", "--json"], env: [:], stdin: typo).stdout)
        #expect(suggested["position"] as? Int == 12)
        #expect(suggested["problem"] as? String == "unknown_word")
        #expect((suggested["suggestions"] as? [String])?.first == "about")

        let short = try Self.key(["mnemonic", "check", "--mnemonic-env", "W"], env: ["W": "abandon abandon abandon"])
        #expect(short.status == 1)
        #expect(short.stdout.contains("3 words"))
        let valid = try Self.object(try Self.key(["mnemonic", "check", "--json"]).stdout)
        #expect(valid["valid"] as? Bool == true)
        #expect(valid["words"] as? Int == 12)

        // A 300-word phrase is too long the same way from standard input as from the environment.
        let long = Array(repeating: "abandon", count: 300).joined(separator: " ")
        for (args, env, stdin) in [(["--stdin"], [String: String](), long), (["--mnemonic-env", "W"], ["W": long], "")] {
            let checked = try Self.key(["mnemonic", "check", "--json"] + args, env: env, stdin: stdin)
            #expect(checked.status == 1, "\(args): \(checked.stderr)")
            let answer = try Self.object(checked.stdout)
            #expect(answer["valid"] as? Bool == false && answer["problem"] as? String == "too_long", "\(args): \(checked.stdout)")
            #expect(!checked.stdout.contains("abandon") && !checked.stderr.contains("abandon"))
        }
    }

    // MARK: - Secrets and usage errors

    @Test func secretsOnTheCommandLineAreRefusedWithoutEchoingThem() throws {
        let attempts: [[String]] = [
            ["address", "--mnemonic", Self.words],
            ["sign-message", "hi", "--passphrase", "TREZOR"],
            ["mnemonic", "check"] + Self.words.split(separator: " ").map(String.init),
            ["address", "--xpub", "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"],
            ["address", "--card", "--pin", "123456"],
            // Pasted into the wrong place: refused by content, and not echoed in a parse error.
            ["address", "--path", Self.words], ["address", "--mnemonic-env", Self.words], ["xpub", "--family", "abandon about"],
            ["address"] + Self.words.split(separator: " ").map(String.init),
            ["sign-message", "hi", "--coin", "0c1e24e5917779d297e14d45f14e1a1a0c1e24e5917779d297e14d45f14e1a1a"],
        ]
        for arguments in attempts {
            let run = try Self.key(arguments, env: [:])
            #expect(run.status == 64, "\(arguments.first ?? ""): \(run.stderr)")
            #expect(run.stderr.contains("never taken on the command line") || run.stderr.contains("PRIVATE"), "\(run.stderr)")
            for secret in ["abandon", "about", "TREZOR", "xprv9s21", "123456", "0c1e24e5"] { #expect(!run.stderr.contains(secret), "\(run.stderr)") }
        }
        // No mnemonic, no terminal to ask on (a new session has no controlling terminal; -w waits for keyhost's status).
        let none = try Keyhost.run(["-w", Keyhost.binary.path, "key", "address"], environment: ["KEYHOST_MNEMONIC": ""],
                                   executable: URL(fileURLWithPath: "/usr/bin/setsid"))
        #expect(none.status == 1)
        #expect(none.stderr.contains("KEYHOST_MNEMONIC"), "\(none.stderr)")
        let noPassphrase = try Keyhost.run(["-w", Keyhost.binary.path, "key", "address", "--passphrase-prompt"], environment: Self.env,
                                           executable: URL(fileURLWithPath: "/usr/bin/setsid"))
        #expect(noPassphrase.status == 1)
        #expect(noPassphrase.stderr.contains("--passphrase-env"), "\(noPassphrase.stderr)")
        let wrong = try Self.key(["address"], env: ["KEYHOST_MNEMONIC": Self.words.replacingOccurrences(of: "about", with: "abandon")])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("the mnemonic in KEYHOST_MNEMONIC is not valid"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("abandon"))
    }

    /// The mnemonic and passphrase typed at the prompts, on a real terminal (script(1) gives keyhost a pseudo-terminal):
    /// neither is echoed, and the keys are the ones bip-utils derives. Each line is typed once its prompt shows: the
    /// prompt turns echo off with TCSAFLUSH, which drops whatever was typed before, so typing after a fixed pause
    /// lost the line whenever keyhost was slower than the pause. The `timeout` only ends a run that is stuck.
    @Test func promptsReadTheTerminalWithoutEcho() throws {
        let expected = try #require(try Self.wallets(Self.words, passphrase: "TREZOR", count: 1).first { $0["kind"] as? String == "p2wpkh" })
        let command = "'\(Keyhost.binary.path)' key address --passphrase-prompt"
        let shell = """
            out=$(mktemp); \
            shows() { n=0; until grep -q "$1" "$out" || [ $n -ge 6000 ]; do sleep 0.05; n=$((n + 1)); done; }; \
            (shows 'mnemonic (not echoed)'; printf '%s\\n' "$W"; shows 'passphrase (not echoed)'; printf '%s\\n' "$P") \
            | timeout 300 script -qec "\(command)" /dev/null > "$out"; status=$?; cat "$out"; rm -f "$out"; exit $status
            """
        let run = try Keyhost.run(["-c", shell], environment: ["W": Self.words, "P": "TREZOR", "KEYHOST_MNEMONIC": ""],
                                  executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("BIP39 mnemonic (not echoed): "))
        #expect(run.stdout.contains("BIP39 passphrase (not echoed): "))
        #expect(run.stdout.contains(try #require((expected["addresses"] as? [String])?.first)), "\(run.stdout)")
        #expect(!run.stdout.contains("abandon") && !run.stdout.contains("TREZOR"), "\(run.stdout)")
    }

    @Test func badOptionValuesAreUsageErrors() throws {
        let cases: [[String]] = [
            ["address", "--coin", "nope"], ["address", "--kind", "p2sh"], ["address", "--path", "m/84'/x"],
            ["address", "--path", "84'/0'/0'/0/0"], ["address", "--count", "0"], ["address", "--count", "-1"],
            ["address", "--index", "5-3"], ["address", "--index", "2147483647", "--count", "2"],
            ["address", "--coin", "btc", "--kind", "ethereum"], ["address", "--coin", "doge", "--kind", "p2tr"],
            ["address", "--path", "m/1/2"], ["address", "--xpub", "xpub-garbage"],
            ["address", "--card", "--path", "m/1/2/3/4/5/6/7/8/9/10/11", "--kind", "p2wpkh"],
            ["address", "--pin-env", "CARD_PIN"], ["xpub", "--family", "zprv"], ["xpub", "--family", "nope"],
            ["sign-message", "hi", "--kind", "p2tr"], ["sign-message", "hi", "--path", "m/86'/0'/0'/0/0"], ["sign-message"],
            ["sign-message", "hi", "--file", "x"], ["mnemonic", "new", "--words", "13"], ["mnemonic", "new", "--words", "-12"],
        ]
        for arguments in cases {
            let run = try Self.key(arguments)
            #expect(run.status == 64, "\(arguments): \(run.stdout)\(run.stderr)")
            let json = try Self.key(arguments + ["--json"])
            #expect(json.status == 64)
            let error = try Self.object(json.stderr)["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "usage", "\(arguments): \(json.stderr)")
        }
    }

    // MARK: - docs/json.md

    /// The `## keyhost key` section's examples parse, and have the keys the commands print.
    @Test func jsonDocumentationMatchesTheOutput() throws {
        let text = try String(contentsOf: Keyhost.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## keyhost key\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        var examples: [String: Any] = [:]
        for block in section.components(separatedBy: "```json\n").dropFirst() {
            let body = block.components(separatedBy: "\n```").first ?? ""
            let lines = body.split(separator: "\n", maxSplits: 1).map(String.init)
            // Each block starts with a comment line naming the command: // keyhost key address --json
            let command = try #require(lines.first?.hasPrefix("// ") == true ? lines.first.map { String($0.dropFirst(3)) } : nil, "\(body)")
            examples[command] = try JSONSerialization.jsonObject(with: Data((lines.count > 1 ? lines[1] : "").utf8))
        }
        let runs: [String: [String]] = [
            "keyhost key address --json": ["address", "--json"],
            "keyhost key address --count 2 --json": ["address", "--count", "2", "--json"],
            "keyhost key xpub --json": ["xpub", "--json"],
            "keyhost key xpub --descriptor --json": ["xpub", "--descriptor", "--json"],
            "keyhost key sign-message --json hello": ["sign-message", "--json", "hello"],
            "keyhost key sign-message --coin eth --json hello": ["sign-message", "--coin", "eth", "--json", "hello"],
            "keyhost key mnemonic check --json": ["mnemonic", "check", "--json"],
            "keyhost key mnemonic new --words 12 --json": ["mnemonic", "new", "--words", "12", "--json"],
        ]
        for (command, arguments) in runs {
            let documented = try #require(examples[command], "docs/json.md has no example for \(command)")
            let actual = try JSONSerialization.jsonObject(with: Data(try Self.key(arguments).stdout.utf8))
            // The examples are real outputs for the BIP39 test mnemonic (only new mnemonics differ).
            if command.contains("mnemonic new") {
                #expect(Set(((documented as? [String: Any]) ?? [:]).keys) == Set(((actual as? [String: Any]) ?? [:]).keys))
            } else {
                #expect(try Self.canonical(documented) == Self.canonical(actual), "\(command)")
            }
        }
        let verify = try #require(examples["keyhost key verify-message 0x9858EfFD232B4033E47d90003D41EC34EcaEda94 SIGNATURE hello --json"] as? [String: Any])
        #expect(verify["valid"] as? Bool == true)
        let invalid = try #require(examples["keyhost key mnemonic check --json (bad checksum)"] as? [String: Any])
        #expect(invalid["problem"] as? String == "checksum")
    }
}
