import Foundation
import Testing

/// `keyhost token wallet init --card` and `keyhost token run` on a card-bound wallet, with the software Keycard.
@Suite struct TokenCardCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    static let env = ["KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest", "ISSUER": String(repeating: "11", count: 32)]

    /// A software card's state file, initialised with the test PIN and pairing password and a key.
    static func cardState(_ path: String, applet: String, seed: String?, home: URL) throws {
        let load = seed.map { "s:load_seed(hd.mnemonic_to_seed(\"\($0)\"))" } ?? "s:generate_key()"
        let setup = try Keyhost.run(["run", "-"], stdin: """
            local card, hd = require "keyhost.card", require "keyhost.hd"
            local s = card.open { reader = "virtual", state = "\(path)", applet = "\(applet)" }
            s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
            s:auto { pin = "123456", pairing_password = "KeycardTest" }
            \(load)
            s:close()
            """, environment: ["HOME": home.path])
        #expect(setup.status == 0, "\(setup.stderr)")
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `token issue --issuer-card` signs with the card's key, as Lua's `token.issue{issuer_card = …}`:
    /// the token's issuer is the x-only key at the path (BIP340, checked here with coincurve's view of
    /// it through `token inspect`); a 3.2 card, which has no Schnorr, is refused with the reason.
    @Test(arguments: ["4.0", "3.2"])
    func issueWithTheIssuerKeyOnACard(applet: String) throws {
        let dir = try Keyhost.scratch(["p.lua": "local t = ... t.emit{redeemed = t.token.value}\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        let state = dir.appendingPathComponent("card.json").path
        try Self.cardState(state, applet: applet, seed: Self.words, home: dir)
        let path = "m/7419'/0'/0'"
        let holder = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        let issued = try Keyhost.run(["token", "issue", "--program", "p.lua", "--value", "5", "--unit", "pt", "--to", holder, "--issuer-card",
                                      "--issuer-path", path, "--reader", "virtual", "--card-state", state, "--json"], cwd: dir, environment: env)
        if applet == "3.2" {
            #expect(issued.status == 1)
            #expect(issued.stderr.lowercased().contains("schnorr"), "\(issued.stderr)")
            return
        }
        #expect(issued.status == 0, "\(issued.stderr)")
        let result = try Self.json(issued.stdout)
        // The issuer is the BIP39 test mnemonic's key at the path, as an independent derivation says.
        let expected = try Keyhost.run(["eval", "return hex.encode(hd.from_mnemonic('\(Self.words)'):derive(\"\(path)\"):public_key():sub(2))"]).stdout
        #expect("\"" + (result["issuer"] as? String ?? "") + "\"\n" == expected, "\(expected)")
        let token = try #require(result["token"] as? String)
        try (token + "\n").write(to: dir.appendingPathComponent("t.tok"), atomically: true, encoding: .utf8)
        let inspect = try Self.json(try Keyhost.run(["token", "inspect", "t.tok", "--json"], cwd: dir).stdout)
        #expect((inspect["tokens"] as? [[String: Any]])?.first?["signature_valid"] as? Bool == true)

        let usage = try Keyhost.run(["token", "issue", "--program", "p.lua", "--value", "5", "--unit", "pt", "--to", holder, "--issuer-card"],
                                    cwd: dir, environment: env)
        #expect(usage.status == 64 && usage.stderr.contains("--issuer-card needs --issuer-path"), "\(usage.stderr)")
        let both = try Keyhost.run(["token", "issue", "--program", "p.lua", "--value", "5", "--unit", "pt", "--to", holder, "--issuer-card",
                                    "--issuer-path", path, "--issuer-key-env", "ISSUER"], cwd: dir, environment: env)
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both.stderr)")
    }

    @Test(arguments: ["3.2", "4.0"])
    func cardBoundWalletSignsReceiptsOnTheCard(applet: String) throws {
        let dir = try Keyhost.scratch(["p.lua": "local t = ... t.emit{redeemed = t.token.value, who = t.args.who}\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        let card = dir.appendingPathComponent("card.json").path, other = dir.appendingPathComponent("other.json").path
        try Self.cardState(card, applet: applet, seed: Self.words, home: dir)
        try Self.cardState(other, applet: applet, seed: nil, home: dir)

        let usage = try Keyhost.run(["token", "wallet", "init", "--wallet", "w.db", "--card", "--reader", "virtual"], cwd: dir, environment: env)
        #expect(usage.status != 0)
        #expect(usage.stderr.contains("--card needs --path"))

        let initialised = try Keyhost.run(["token", "wallet", "init", "--wallet", "w.db", "--card", "--reader", "virtual", "--card-state", card,
                                           "--path", "m/44'/60'/0'/0/0", "--json"], cwd: dir, environment: env)
        #expect(initialised.status == 0, "\(initialised.stderr)")
        let info = try Self.json(initialised.stdout)
        #expect(info["holder_kind"] as? String == "card")
        #expect(info["card_path"] as? String == "m/44'/60'/0'/0/0")
        // The BIP39 test mnemonic's key at m/44'/60'/0'/0/0.
        let holder = try #require(info["holder"] as? String)
        #expect(holder == "0237b0bb7a8288d38ed49a524b5dc98cff3eb5ca824c9f9dc0dfdb3d9cd600f299")

        let issued = try Keyhost.run(["token", "issue", "--program", "p.lua", "--value", "5", "--unit", "EUR-cent", "--to", holder,
                                      "--issuer-key-env", "ISSUER", "-o", "t.tok"], cwd: dir, environment: env)
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(try Keyhost.run(["token", "import", "--wallet", "w.db", "t.tok"], cwd: dir, environment: env).status == 0)
        let list = try Self.json(try Keyhost.run(["token", "list", "--wallet", "w.db", "--json"], cwd: dir, environment: env).stdout)
        let id = try #require(((list["tokens"] as? [[String: Any]])?.first?["id"]) as? String)

        // Another card: refused before anything runs; the token stays HELD.
        let wrong = try Keyhost.run(["token", "run", "--wallet", "w.db", id, "--reader", "virtual", "--card-state", other], cwd: dir, environment: env)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("but the wallet is bound to key"), "\(wrong.stderr)")
        let held = try Keyhost.run(["token", "list", "--wallet", "w.db"], cwd: dir, environment: env)
        #expect(held.stdout.contains("HELD"))

        let ran = try Keyhost.run(["token", "run", "--wallet", "w.db", String(id.prefix(8)), "--reader", "virtual", "--card-state", card,
                                   "--arg", "who=bob", "--receipt", "r.txt"], cwd: dir, environment: env)
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ran.stdout.contains("SPENT"))
        let verified = try Keyhost.run(["token", "verify-receipt", "r.txt"], cwd: dir, environment: env)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("holder signature  valid"))
        for output in [initialised, wrong, ran, verified] {
            #expect(!output.stdout.contains("123456") && !output.stderr.contains("123456"))
            #expect(!output.stdout.contains("KeycardTest") && !output.stderr.contains("KeycardTest"))
        }

        // A software wallet takes no card options.
        #expect(try Keyhost.run(["token", "wallet", "init", "--wallet", "s.db"], cwd: dir, environment: env).status == 0)
        let misplaced = try Keyhost.run(["token", "run", "--wallet", "s.db", "abcd", "--reader", "virtual"], cwd: dir, environment: env)
        #expect(misplaced.status == 1)
        #expect(misplaced.stderr.contains("--reader and --card-state are for card-bound wallets"))
    }
}
