import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost descriptor …` and `keyhost key xpub --descriptor` through the binary. The expected values are the
/// BIP39 test phrase's, as embit and BDK derive them (Tests/Oracles/descriptor_oracle.py checks the library).
@Suite struct DescriptorCommandTests {
    static let account = "[73c5da0a/84h/0h/0h]xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"
    static let receive = "wpkh(\(account)/0/*)#afwvtk2s"
    static let change = "wpkh(\(account)/1/*)#vatdkr6g"
    static let multipath = "wpkh(\(account)/<0;1>/*)#qf45pmyh"

    static func run(_ arguments: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> KeyhostRun {
        try Keyhost.run(["descriptor"] + arguments, stdin: stdin, environment: env)
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test("checksum, parse and addresses print what the docs and embit say")
    func basics() throws {
        let body = String(Self.multipath.dropLast(9))
        #expect(try Self.run(["checksum", body]).stdout == Self.multipath + "\n")
        #expect(try Self.run(["checksum", "raw(deadbeef)"]).stdout == "raw(deadbeef)#89f8spxm\n")
        let parsed = try Self.run(["parse", body])
        #expect(parsed.status == 0 && parsed.stdout == [Self.multipath, Self.receive, Self.change].joined(separator: "\n") + "\n", "\(parsed.stderr)")
        let addresses = try Self.run(["addresses", Self.receive, "--count", "3"])
        #expect(addresses.stdout == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\nbc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g\nbc1qp59yckz4ae5c4efgw2s5wfyvrz0ala7rgvuz8z\n")
        // Standard input, with the trailing newline a file has.
        let piped = try Self.run(["addresses", "-", "--from", "1", "--count", "1"], stdin: Self.receive + "\n")
        #expect(piped.stdout == "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g\n", "\(piped.stderr)")
        // A multipath descriptor: each part in turn.
        let both = try Self.run(["addresses", Self.multipath, "--count", "1", "--json"])
        let rows = try #require(try Self.json(both.stdout) as? [[String: Any]])
        #expect(rows.map { $0["multipath_index"] as? Int } == [0, 1])
        #expect(rows.first?["address"] as? String == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
    }

    @Test("docs/json.md's `## keyhost descriptor` examples are what the commands print")
    func jsonDocumentation() throws {
        let text = try String(contentsOf: Keyhost.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## keyhost descriptor\n").dropFirst().first).components(separatedBy: "\n## ").first ?? ""
        var checked = 0
        for block in section.components(separatedBy: "```json\n").dropFirst() {
            let body = block.components(separatedBy: "\n```").first ?? ""
            let lines = body.split(separator: "\n", maxSplits: 1).map(String.init)
            guard let first = lines.first, first.hasPrefix("// keyhost descriptor ") else { continue }
            // The comment is a shell line: split it on spaces outside double quotes.
            var arguments = [String](), current = "", quoted = false
            for c in first.dropFirst("// keyhost ".count) {
                if c == "\"" { quoted.toggle() } else if c == " " && !quoted { arguments.append(current); current = "" } else { current.append(c) }
            }
            arguments.append(current)
            let run = try Keyhost.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            let documented = try JSONSerialization.jsonObject(with: Data(lines[1].utf8))
            #expect(try KeyCommandTests.canonical(documented) == KeyCommandTests.canonical(try Self.json(run.stdout)), "\(first)")
            checked += 1
        }
        #expect(checked == 2)
    }

    @Test("bad descriptors: exit 1 with kind and position; private keys refused (64) and never echoed; bad options 64", arguments: [
        (["parse", "wpkh(\(DescriptorCommandTests.account.dropFirst(20))/0H/*)"], 1, "invalid_descriptor", 118),
        (["parse", "wpkh(\(DescriptorCommandTests.account)/0/*)#afwvtk2t"], 1, "descriptor_checksum", 142),
        (["parse", "tr(\(DescriptorCommandTests.account)/0/*,pk(\(DescriptorCommandTests.account)/1/*))"], 1, "unsupported_descriptor", 138),
        (["addresses", "wpkh(\(DescriptorCommandTests.account)/0/*)", "--network", "testnet"], 1, "descriptor_network", nil),
        (["addresses", "wpkh(\(DescriptorCommandTests.account)/0/*)", "--count", "0"], 64, "usage", nil),
        (["addresses", "wpkh(\(DescriptorCommandTests.account)/0/*)", "--from", "2147483648"], 64, "usage", nil),
        (["addresses", "wpkh(\(DescriptorCommandTests.account)/<0;1>/*)", "--from", "2147483647", "--count", "2"], 1, "descriptor_derivation", nil),
    ] as [([String], Int32, String, Int?)])
    func errors(arguments: [String], status: Int32, kind: String, position: Int?) throws {
        let run = try Keyhost.run(["descriptor"] + arguments + ["--json"])
        #expect(run.status == status, "\(arguments): \(run.stderr)")
        let error = try #require(try Self.json(run.stderr.split(separator: "\n").last.map(String.init) ?? "") as? [String: Any])["error"] as? [String: Any]
        #expect(error?["kind"] as? String == kind, "\(run.stderr)")
        if let position { #expect(error?["position"] as? Int == position, "\(run.stderr)") }
        #expect(run.stdout.isEmpty)
    }

    @Test("a descriptor with a private key is refused without showing it")
    func privateKeys() throws {
        let xprv = "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U"
        let wif = "L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1"
        for text in ["pkh(\(xprv)/0/*)", "wpkh(\(wif))"] {
            for command in ["checksum", "parse", "addresses"] {
                let run = try Self.run([command, text])
                #expect(run.status == 64 && run.stderr.contains("PRIVATE"), "\(command) \(text): \(run.stderr)")
                #expect(!run.stderr.contains(xprv.dropFirst(4).prefix(20)) && !run.stderr.contains(wif.dropFirst(4).prefix(20)) && run.stdout.isEmpty)
            }
        }
    }

    @Test("key xpub --descriptor: the mnemonic's and the card's receive and change descriptors, with origin; tpub on testnet")
    func keyXpubDescriptor() throws {
        let env = ["KEYHOST_MNEMONIC": KeyCommandTests.words]
        let plain = try Keyhost.run(["key", "xpub", "--descriptor"], environment: env)
        #expect(plain.status == 0 && plain.stdout == Self.receive + "\n" + Self.change + "\n", "\(plain.stderr)")
        let taproot = try Keyhost.run(["key", "xpub", "--descriptor", "--kind", "p2tr"], environment: env)
        #expect(taproot.stdout.hasPrefix("tr([73c5da0a/86h/0h/0h]xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ/0/*)#se42yddx\n"))
        let test = try Keyhost.run(["key", "xpub", "--descriptor", "--coin", "test", "--json"], environment: env)
        let descriptors = try #require((try Self.json(test.stdout) as? [String: Any])?["descriptors"] as? [String: String], "\(test.stderr)")
        #expect(descriptors["multipath"] == "wpkh([73c5da0a/84h/1h/0h]tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M/<0;1>/*)#lxek0ef2")
        // An account xpub: no origin, and a note saying so.
        let zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
        let fromXpub = try Keyhost.run(["key", "xpub", "--descriptor", "--xpub", zpub])
        #expect(fromXpub.stdout.hasPrefix("wpkh(xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V/0/*)#"))
        #expect(fromXpub.stderr.contains("origin"))
        let eth = try Keyhost.run(["key", "xpub", "--descriptor", "--coin", "eth"], environment: env)
        #expect(eth.status == 64)
        // The software card holding the same phrase gives the same descriptors (the origin's fingerprint comes from the card).
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("card.json").path
        try TokenCardCommandTests.cardState(state, applet: "4.0", seed: KeyCommandTests.words, home: dir)
        var cardEnv = KeyCommandTests.cardEnv
        cardEnv["HOME"] = dir.path
        let card = try Keyhost.run(["key", "xpub", "--descriptor", "--card", "--reader", "virtual", "--card-state", state], environment: cardEnv)
        #expect(card.status == 0 && card.stdout == plain.stdout, "\(card.stderr)")
    }
}
