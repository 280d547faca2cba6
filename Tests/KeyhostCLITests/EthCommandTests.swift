import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost eth sign-tx | sign-typed-data | decode-tx`, run as a binary; eth-account checks what it prints.
@Suite struct EthCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    /// The well-known first Ethereum address (m/44'/60'/0'/0/0) of that mnemonic.
    static let address = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    static let env = ["WORDS": words, "KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"]

    static let tx1559 = """
        {"chain_id": 1, "nonce": 7, "gas": 21000, "max_fee_per_gas": "30000000000", "max_priority_fee_per_gas": "0x3b9aca00",
         "to": "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045", "value": "1000000000000000000", "data": "0x"}
        """
    static let txLegacy = """
        {"type": 0, "chain_id": 137, "nonce": 0, "gas": 60000, "gas_price": "50000000000", "to": "0x3535353535353535353535353535353535353535",
         "value": 0, "data": "0xa9059cbb"}
        """
    static let txAccessList = """
        {"type": 1, "chain_id": 11155111, "nonce": 3, "gas": 90000, "gas_price": 1, "to": "",
         "access_list": [{"address": "0x3535353535353535353535353535353535353535", "storage_keys": ["0x0000000000000000000000000000000000000000000000000000000000000001"]}],
         "data": "0x6001600055"}
        """
    static let mail = """
        {"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},
        {"name":"verifyingContract","type":"address"}],"Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],
        "Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},"primaryType":"Mail",
        "domain":{"name":"Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
        "message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
        "to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}
        """

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    static func scratch() throws -> URL {
        try Keyhost.scratch(["tx1559.json": tx1559, "legacy.json": txLegacy, "al.json": txAccessList, "mail.json": mail])
    }

    @Test("sign-tx with a mnemonic: eth-account recovers the sender and re-encodes the bytes; decode-tx agrees")
    func mnemonicSignsAllTypes() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var raws = [String]()
        for file in ["tx1559.json", "legacy.json", "al.json"] {
            let run = try Keyhost.run(["eth", "sign-tx", file, "--mnemonic-env", "WORDS"], cwd: dir, environment: Self.env)
            #expect(run.status == 0, "\(file): \(run.stderr)")
            let raw = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(raw.hasPrefix("0x"))
            raws.append(raw)
            let decoded = try Keyhost.run(["eth", "decode-tx", raw, "--json"], cwd: dir)
            #expect(decoded.status == 0, "\(decoded.stderr)")
            let fields = try Self.json(decoded.stdout)
            #expect(fields["from"] as? String == Self.address)
            // The same through standard input.
            let piped = try Keyhost.run(["eth", "decode-tx", "-", "--json"], stdin: raw + "\n", cwd: dir)
            #expect(try Self.json(piped.stdout)["hash"] as? String == fields["hash"] as? String)
        }
        let checks = try JSONSerialization.jsonObject(with: PythonOracle.run("eth_oracle.py", ["tx-check"], input: try JSONSerialization.data(withJSONObject: raws)))
            as? [[String: String]] ?? []
        #expect(checks.map { $0["from"] } == raws.map { _ in Self.address })
        #expect(checks.map { $0["reencoded"] } == raws)
    }

    @Test("--passphrase-env and --path pick the key hd.from_mnemonic derives")
    func passphraseAndPath() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["PASS"] = "TREZOR"
        let expected = try Keyhost.run(["run", "-"], stdin: #"print(require("keyhost.hd").from_mnemonic(os.getenv("WORDS"), {passphrase = "TREZOR"}):derive("m/44'/60'/0'/0/3"):address{coin = "eth"})"#,
                                       environment: env).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(expected.hasPrefix("0x") && expected != Self.address, "\(expected)")
        let run = try Keyhost.run(["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "WORDS", "--passphrase-env", "PASS", "--path", "m/44'/60'/0'/0/3", "--json"],
                                  cwd: dir, environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.json(run.stdout)["from"] as? String == expected)
    }

    @Test("--json prints raw, hash, from, v, r, s with the fields (docs/json.md)")
    func signTxJSON() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env)
        #expect(run.status == 0, "\(run.stderr)")
        let out = try Self.json(run.stdout)
        #expect(out["from"] as? String == Self.address)
        #expect(out["type"] as? Int == 2)
        #expect(out["value"] as? String == "1000000000000000000")
        #expect(out["max_priority_fee_per_gas"] as? String == "1000000000")
        #expect((out["r"] as? String)?.count == 66)
        #expect([0, 1].contains(out["y_parity"] as? Int ?? -1))
        #expect((out["raw"] as? String)?.hasPrefix("0x02") == true)
        #expect((out["hash"] as? String)?.count == 66)
    }

    @Test("--card --reader virtual signs with the same key as the mnemonic (same bytes, same address)", arguments: ["3.2", "4.0"])
    func softwareCardMatchesMnemonic(applet: String) throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = Self.env
        env["HOME"] = dir.path
        let state = dir.appendingPathComponent("card.json").path
        try TokenCardCommandTests.cardState(state, applet: applet, seed: Self.words, home: dir)
        for file in ["tx1559.json", "legacy.json"] {
            let card = try Keyhost.run(["eth", "sign-tx", file, "--card", "--reader", "virtual", "--card-state", state, "--json"], cwd: dir, environment: env)
            #expect(card.status == 0, "\(card.stderr)")
            let mnemonic = try Keyhost.run(["eth", "sign-tx", file, "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: env)
            let a = try Self.json(card.stdout), b = try Self.json(mnemonic.stdout)
            #expect(a["from"] as? String == Self.address)
            // Both sign with RFC 6979, so the raw transactions are identical.
            #expect(a["raw"] as? String == b["raw"] as? String)
        }
        let typed = try Keyhost.run(["eth", "sign-typed-data", "mail.json", "--card", "--reader", "virtual", "--card-state", state, "--json"],
                                    cwd: dir, environment: env)
        #expect(typed.status == 0, "\(typed.stderr)")
        #expect(try Self.json(typed.stdout)["address"] as? String == Self.address)
        // Another path gives another signer.
        let other = try Keyhost.run(["eth", "sign-tx", "tx1559.json", "--card", "--reader", "virtual", "--card-state", state, "--path", "m/44'/60'/0'/0/1",
                                     "--json"], cwd: dir, environment: env)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try Self.json(other.stdout)["from"] as? String != Self.address)
    }

    @Test("sign-typed-data: the Mail example's digest; eth-account recovers keyhost's signature")
    func typedData() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["eth", "sign-typed-data", "mail.json", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env)
        #expect(run.status == 0, "\(run.stderr)")
        let out = try Self.json(run.stdout)
        #expect(out["digest"] as? String == "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
        #expect(out["domain_separator"] as? String == "0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f")
        #expect(out["address"] as? String == Self.address)
        let plain = try Keyhost.run(["eth", "sign-typed-data", "-", "--mnemonic-env", "WORDS"], stdin: Self.mail, cwd: dir, environment: Self.env)
        let signature = plain.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signature == out["signature"] as? String)
        let document = try JSONSerialization.jsonObject(with: Data(Self.mail.utf8))
        let recovered = try JSONSerialization.jsonObject(with: PythonOracle.run(
            "eth_oracle.py", ["typed-recover"], input: try JSONSerialization.data(withJSONObject: [["document": document, "signature": signature]])))
        #expect(recovered as? [String] == [Self.address])
    }

    /// An EIP-2612 permit for the signer's own tokens signs quietly; one whose owner is another address is
    /// signed with a warning (eth-account recovers the signer either way).
    @Test("sign-typed-data warns when a permit's owner is not the signer", arguments: [address, "0x00000000000000000000000000000000000000aA"])
    func permitOwner(_ owner: String) throws {
        let permit = """
            {"types": {"EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
               {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
             "Permit": [{"name": "owner", "type": "address"}, {"name": "spender", "type": "address"}, {"name": "value", "type": "uint256"},
               {"name": "nonce", "type": "uint256"}, {"name": "deadline", "type": "uint256"}]},
             "primaryType": "Permit",
             "domain": {"name": "USD Coin", "version": "2", "chainId": 1, "verifyingContract": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"},
             "message": {"owner": "\(owner.lowercased())", "spender": "0x1111111254EEB25477B68fb85Ed929f73A960582", "value": "1000000",
               "nonce": 0, "deadline": 1900000000}}
            """
        let dir = try Keyhost.scratch(["permit.json": permit])
        defer { try? FileManager.default.removeItem(at: dir) }
        let mine = owner == Self.address
        let plain = try Keyhost.run(["eth", "sign-typed-data", "permit.json", "--mnemonic-env", "WORDS"], cwd: dir, environment: Self.env)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stderr.contains("warning: message.owner is \(owner.lowercased()), not the signer \(Self.address)") == !mine, "\(plain.stderr)")
        let json = try Self.json(try Keyhost.run(["eth", "sign-typed-data", "permit.json", "--mnemonic-env", "WORDS", "--json"], cwd: dir, environment: Self.env).stdout)
        #expect((json["warnings"] as? [String])?.count == (mine ? 0 : 1))
        let document = try JSONSerialization.jsonObject(with: Data(permit.utf8))
        let recovered = try JSONSerialization.jsonObject(with: PythonOracle.run(
            "eth_oracle.py", ["typed-recover"], input: try JSONSerialization.data(withJSONObject: [["document": document, "signature": json["signature"] as? String ?? ""]])))
        #expect(recovered as? [String] == [Self.address])
    }

    static let errors: [(String, [String], String?, Int32, String)] = [
        // No key named and no terminal to ask on: the mnemonic is asked for as every command that takes a key asks.
        ("no key source", ["eth", "sign-tx", "tx1559.json"], nil, 1, "no mnemonic given"),
        ("two key sources", ["eth", "sign-tx", "tx1559.json", "--card", "--mnemonic-env", "WORDS"], nil, 64, "exclude each other"),
        ("card state with a real reader", ["eth", "sign-tx", "tx1559.json", "--card", "--reader", "0", "--card-state", "x"], nil, 64,
         "--card-state is the software card's state file: it goes with --reader virtual"),
        ("reader implies card", ["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "WORDS", "--reader", "virtual"], nil, 64, "exclude each other"),
        ("card option without a card", ["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "WORDS", "--pin-env", "CARD_PIN"],
         nil, 64, "--trusted-ca go with --card"),
        ("bad path", ["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "WORDS", "--path", "m/x"], nil, 64, "--path m/x"),
        ("unset variable", ["eth", "sign-tx", "tx1559.json", "--mnemonic-env", "NO_SUCH_VARIABLE_SET"], nil, 1, "NO_SUCH_VARIABLE_SET"),
        ("missing file", ["eth", "sign-tx", "nope.json", "--mnemonic-env", "WORDS"], nil, 1, "nope.json"),
        ("not JSON", ["eth", "sign-tx", "-", "--mnemonic-env", "WORDS"], "{chain_id: 1}", 1, "is not valid JSON"),
        ("typo", ["eth", "sign-tx", "-", "--mnemonic-env", "WORDS"], #"{"chain_id":1,"nonce":0,"gas":21000,"gas_price":1,"to":"","gasLimit":1}"#, 1,
         "unknown transaction field 'gasLimit'"),
        ("wrong from", ["eth", "sign-tx", "-", "--mnemonic-env", "WORDS"],
         #"{"chain_id":1,"nonce":0,"gas":21000,"gas_price":1,"to":"","from":"0x0000000000000000000000000000000000000001"}"#, 1, "check the key or derivation path"),
        ("already signed", ["eth", "sign-tx", "-", "--mnemonic-env", "WORDS"],
         #"{"chain_id":1,"nonce":0,"gas":21000,"gas_price":1,"to":"","v":37,"r":"0x01","s":"0x01"}"#, 1, "already carries a signature"),
        ("raw not hex", ["eth", "decode-tx", "zz"], nil, 64, "RAW must be 0x-hex"),
        ("raw truncated", ["eth", "decode-tx", "0x02f8"], nil, 1, "truncated"),
        ("bad typed data", ["eth", "sign-typed-data", "-", "--mnemonic-env", "WORDS"], #"{"types":{},"primaryType":"X","domain":{},"message":{}}"#, 1,
         "primaryType 'X' is not defined"),
    ]

    @Test("mistakes exit 64, failures 1, each with a message naming the problem", arguments: 0..<errors.count)
    func errorCase(_ index: Int) throws {
        let (name, arguments, stdin, status, expected) = Self.errors[index]
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(arguments, stdin: stdin, cwd: dir, environment: Self.env)
        #expect(run.status == status, "\(name): \(run.stderr)")
        #expect(run.stderr.contains(expected), "\(name): \(run.stderr)")
        #expect(run.stdout.isEmpty, "\(name)")
        #expect(!run.stderr.contains("abandon"), "\(name): the mnemonic must never be printed")
    }

    @Test("--json errors carry a kind")
    func jsonErrors() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = try Keyhost.run(["eth", "decode-tx", "0x03c0", "--json"], cwd: dir)
        #expect(bad.status == 1)
        let error = try #require(try Self.json(bad.stderr)["error"] as? [String: Any])
        #expect(error["kind"] as? String == "invalid_transaction")
        #expect((error["message"] as? String)?.contains("EIP-4844") == true)
        let usage = try Keyhost.run(["eth", "sign-tx", "tx1559.json", "--path", "m/x", "--json"], cwd: dir)
        #expect(usage.status == 64)
        #expect((try Self.json(usage.stderr)["error"] as? [String: Any])?["kind"] as? String == "usage")
    }
}
