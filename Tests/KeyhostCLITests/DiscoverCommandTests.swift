import Foundation
import KeyhostTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `keyhost discover` end to end: the built binary against index files, a local Esplora-like server and
/// a checkpoint that survives `kill -9`.
@Suite(.serialized)
struct DiscoverCommandTests {
    static let words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

    /// Addresses and xpubs of the test wallet, computed by keyhost.hd (private derivation), not by discovery.
    static let wallet: [String: String] = {
        let script = """
            local hd = require "keyhost.hd"
            local m = hd.from_mnemonic("\(words)")
            for _, p in ipairs { "m/84'/0'/0'/0/2", "m/84'/0'/0'/0/6", "m/84'/0'/0'/1/0", "m/84'/0'/1'/0/0", "m/84'/0'/0'/0/40" } do
              print(p .. "=" .. m:derive(p):address { kind = "p2wpkh" })
            end
            print("zpub0=" .. m:derive("m/84'/0'/0'"):xpub "zpub")
            print("zpub1=" .. m:derive("m/84'/0'/1'"):xpub "zpub")
            """
        let run = try! Keyhost.run(["run", "-"], stdin: script)
        var out = [String: String]()
        for line in run.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { out[parts[0]] = parts[1] }
        }
        return out
    }()

    static var used: [String] { ["m/84'/0'/0'/0/2", "m/84'/0'/0'/0/6", "m/84'/0'/0'/1/0", "m/84'/0'/1'/0/0", "m/84'/0'/0'/0/40"].map { wallet[$0]! } }

    static func indexFile() throws -> (URL, String) {
        let dir = try Keyhost.scratch(["used.txt": "# used\n" + used.joined(separator: "\n") + "\n"])
        return (dir, dir.appendingPathComponent("used.txt").path)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func xpubWithIndexFileAsTableJSONAndCSV() throws {
        let (dir, index) = try Self.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let zpub = try #require(Self.wallet["zpub0"])
        let base = ["discover", "--xpub", zpub, "--source", "index:\(index)", "--gap-limit", "5"]

        let table = try Keyhost.run(base)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stderr.isEmpty)   // no progress line: stderr is not a terminal
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "bip84 m/84'/0'/{account}'/{change}/{index} (p2wpkh, BTC)")
        #expect(lines.contains("gap limits: receive 5, change 5, accounts 1"))
        let row2 = try #require(lines.first { $0.contains("m/84'/0'/0'/0/2") })
        #expect(row2.split(separator: " ", omittingEmptySubsequences: true).map(String.init) == ["0", "receive", "2", "m/84'/0'/0'/0/2", Self.used[0]])
        #expect(lines.contains { $0.contains("m/84'/0'/0'/0/6") && $0.contains(Self.used[1]) })
        #expect(lines.contains { $0.contains("change") && $0.contains("m/84'/0'/0'/1/0") })
        #expect(!table.stdout.contains(Self.used[4]))   // 0/40 lies beyond the gap
        #expect(lines.contains("account 0: 3 used, last used receive 6, change 0"))
        #expect(lines.contains("  \(zpub)"))
        #expect(lines.contains { $0.hasPrefix("totals: 1 of 1 accounts used, 3 used addresses, 18 checked") })
        #expect(lines.contains { $0.hasPrefix("note: the key source is a single zpub") })

        let out = try Keyhost.run(base + ["--json"])
        #expect(out.status == 0, "\(out.stderr)")
        let root = try json(out.stdout)
        #expect(root["scheme"] as? String == "bip84")
        #expect(root["coin"] as? String == "BTC")
        #expect(root["kind"] as? String == "p2wpkh")
        #expect((root["gap_limits"] as? [String: Any])?["receive"] as? Int == 5)
        let accounts = try #require(root["accounts"] as? [[String: Any]])
        #expect(accounts.count == 1)
        #expect(accounts[0]["account"] as? Int == 0)
        #expect(accounts[0]["path"] as? String == "m/84'/0'/0'")
        #expect(accounts[0]["xpub"] as? String == zpub)
        #expect((accounts[0]["last_used"] as? [String: Any])?["receive"] as? Int == 6)
        #expect((accounts[0]["last_used"] as? [String: Any])?["change"] as? Int == 0)
        #expect(accounts[0]["receive_checked"] as? Int == 12)
        #expect(accounts[0]["change_checked"] as? Int == 6)
        let usedAddresses = try #require(accounts[0]["used"] as? [[String: Any]])
        #expect(usedAddresses.map { $0["address"] as? String } == [Self.used[0], Self.used[1], Self.used[2]])
        #expect(usedAddresses.map { $0["chain"] as? String } == ["receive", "receive", "change"])
        #expect(usedAddresses.map { $0["index"] as? Int } == [2, 6, 0])
        #expect(usedAddresses.map { $0["path"] as? String } == ["m/84'/0'/0'/0/2", "m/84'/0'/0'/0/6", "m/84'/0'/0'/1/0"])
        let totals = try #require(root["totals"] as? [String: Any])
        #expect(totals["addresses_checked"] as? Int == 18)
        #expect(totals["used_addresses"] as? Int == 3)

        let csv = try Keyhost.run(base + ["--csv"])
        #expect(csv.status == 0)
        #expect(csv.stdout == """
            account,chain,index,path,address,account_xpub
            0,receive,2,m/84'/0'/0'/0/2,\(Self.used[0]),\(zpub)
            0,receive,6,m/84'/0'/0'/0/6,\(Self.used[1]),\(zpub)
            0,change,0,m/84'/0'/0'/1/0,\(Self.used[2]),\(zpub)

            """)
    }

    /// `discover --json` and `discovery.scan` share one schema: the same names at every level (JSON keeps absent
    /// values as null, where Lua has no key at all).
    @Test func jsonNamesAreTheLuaTableNames() throws {
        let (dir, index) = try Self.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let zpub = try #require(Self.wallet["zpub0"])
        let cli = try Keyhost.run(["discover", "--xpub", zpub, "--source", "index:\(index)", "--gap-limit", "5", "--json"])
        #expect(cli.status == 0, "\(cli.stderr)")
        func names(_ value: Any, _ prefix: String, _ out: inout Set<String>) {
            if let object = value as? [String: Any] {
                for (key, inner) in object where !(inner is NSNull) {
                    out.insert(prefix + key)
                    names(inner, prefix + key + ".", &out)
                }
            } else if let array = value as? [Any], let first = array.first {
                names(first, prefix + "[].", &out)
            }
        }
        var fromJSON = Set<String>()
        names(try json(cli.stdout), "", &fromJSON)
        let lua = try Keyhost.run(["run", "-"], stdin: """
            local discovery = require "keyhost.discovery"
            local r = discovery.scan { xpub = "\(zpub)", source = "index:\(index)", gap_limit = 5 }
            local out = {}
            local function walk(t, prefix)
              for k, v in pairs(t) do
                if type(k) == "string" then
                  out[#out + 1] = prefix .. k
                  if type(v) == "table" then walk(v, prefix .. k .. ".") end
                elseif k == 1 and type(v) == "table" then
                  walk(v, prefix:sub(1, -2) .. ".[].")
                end
              end
            end
            walk(r, "")
            table.sort(out)
            print(table.concat(out, "\\n"))
            """)
        #expect(lua.status == 0, "\(lua.stderr)")
        let fromLua = Set(lua.stdout.split(separator: "\n").map(String.init))
        #expect(fromLua.contains("accounts.[].used.[].address"))
        #expect(fromJSON == fromLua)
        // Absent values are null in JSON rather than missing: this zpub's account has no number.
        let account = try #require((try json(cli.stdout)["accounts"] as? [[String: Any]])?.first)
        #expect(account.keys.contains("account"))
    }

    /// README's `--template "m/44'/60'/{account}'/0/{index}"` finds Ethereum addresses: the template's coin-type step
    /// names the coin when --coin is not given.
    @Test func anEthereumTemplateDerivesEthereumAddresses() throws {
        let dir = try Keyhost.scratch(["used.txt": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94\n"])   // m/44'/60'/0'/0/0 of the test phrase
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--template", "m/44'/60'/{account}'/0/{index}",
                                   "--source", "index:" + dir.appendingPathComponent("used.txt").path, "--gap-limit", "3", "--json"],
                                  environment: ["W": Self.words])
        #expect(run.status == 0, "\(run.stderr)")
        let root = try json(run.stdout)
        #expect(root["coin"] as? String == "ETH")
        #expect(root["kind"] as? String == "ethereum")
        let used = (root["accounts"] as? [[String: Any]])?.first?["used"] as? [[String: Any]]
        #expect(used?.first?["path"] as? String == "m/44'/60'/0'/0/0")
    }

    /// docs/json.md's `## keyhost discover` example has the names, at every level, that the command prints.
    @Test func theDocumentedJSONIsWhatDiscoverPrints() throws {
        let dir = try Keyhost.scratch(["used.txt": "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:used.txt", "--gap-limit", "2", "--json"],
                                  cwd: dir, environment: ["W": Self.words])
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOf: Keyhost.repository.appendingPathComponent("docs/json.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## keyhost discover\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first)
        func names(_ value: Any, _ prefix: String, _ out: inout Set<String>) {
            if let object = value as? [String: Any] {
                for (key, inner) in object { out.insert(prefix + key); names(inner, prefix + key + ".", &out) }
            } else if let array = value as? [Any] {
                for item in array { names(item, prefix + "[].", &out) }
            }
        }
        var documented = Set<String>(), printed = Set<String>()
        names(try JSONSerialization.jsonObject(with: Data(block.utf8)), "", &documented)
        names(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)), "", &printed)
        #expect(documented == printed)
        #expect(documented.contains("accounts.[].used.[].chain"))
        // The example is this very run, byte for byte, but for the folder name.
        #expect(block == run.stdout.trimmingCharacters(in: .newlines))
    }

    @Test func mnemonicFromTheEnvironmentScansAccounts() throws {
        let (dir, index) = try Self.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try Keyhost.run(["discover", "--mnemonic-env", "WALLET_WORDS", "--source", "index:\(index)", "--gap-limit", "5", "--json"],
                                  environment: ["WALLET_WORDS": Self.words])
        #expect(run.status == 0, "\(run.stderr)")
        let accounts = try #require(try json(run.stdout)["accounts"] as? [[String: Any]])
        #expect(accounts.count == 3)   // 0 and 1 used, 2 empty
        #expect(accounts[1]["xpub"] as? String == Self.wallet["zpub1"])
        #expect((accounts[1]["used"] as? [[String: Any]])?.first?["address"] as? String == Self.used[3])
        #expect(accounts[2]["is_used"] as? Bool == false)
        #expect(!run.stdout.contains("abandon") && !run.stderr.contains("abandon"))
    }

    /// An Esplora-like server: `/address/X` answers tx counts, used iff X is in `used`; each answer waits `delay`.
    static func esplora(delay: Double = 0) throws -> TestHTTPServer {
        let used = Set(Self.used)
        return try TestHTTPServer { request in
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            guard request.path.hasPrefix("/address/") else { return .json("{}", status: 404) }
            let address = String(request.path.dropFirst("/address/".count))
            let count = used.contains(address) ? 2 : 0
            return .json("{\"address\":\"\(address)\",\"chain_stats\":{\"tx_count\":\(count)},\"mempool_stats\":{\"tx_count\":0}}")
        }
    }

    @Test func esploraSource() throws {
        let server = try Self.esplora()
        defer { server.stop() }
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "esplora:\(server.baseURL)", "--gap-limit", "5", "--csv"],
                                  environment: ["W": Self.words])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        #expect(rows.map { $0[4] } == [Self.used[0], Self.used[1], Self.used[2], Self.used[3]])
        #expect(server.requests.allSatisfy { $0.method == "GET" && $0.path.hasPrefix("/address/bc1q") })
        #expect(server.requests.count == 18 + 11 + 10)   // account 0: 12 + 6; account 1: 6 + 5; account 2: 5 + 5
        #expect(server.maxInFlight <= 4)
    }

    @Test func resumesAfterKill9WithTheSameResult() throws {
        let server = try Self.esplora(delay: 0.02)
        defer { server.stop() }
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let checkpoint = dir.appendingPathComponent("job.checkpoint").path
        let arguments = ["discover", "--mnemonic-env", "W", "--source", "esplora:\(server.baseURL)", "--gap-limit", "10",
                         "--account-gap", "2", "--parallel", "1", "--json"]

        let reference = try Keyhost.run(arguments, environment: ["W": Self.words])
        #expect(reference.status == 0, "\(reference.stderr)")

        // Start, wait for the checkpoint to appear, kill -9.
        let process = Process()
        process.executableURL = Keyhost.binary
        process.arguments = arguments + ["--checkpoint", checkpoint]
        var env = ProcessInfo.processInfo.environment
        env["W"] = Self.words
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed once a checkpoint exists and a few more addresses have been asked since: a state,
        // not a time (the bound only ends a run that never gets there).
        let deadline = Date().addingTimeInterval(300)
        while !FileManager.default.fileExists(atPath: checkpoint) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let asked = server.requests.count
        while server.requests.count < asked + 3 && process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the job ended before it could be interrupted")
        #expect(FileManager.default.fileExists(atPath: checkpoint))

        let resumed = try Keyhost.run(arguments + ["--checkpoint", checkpoint], environment: ["W": Self.words])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        var a = try json(reference.stdout), b = try json(resumed.stdout)
        let totalsA = try #require(a.removeValue(forKey: "totals") as? [String: Any])
        let totalsB = try #require(b.removeValue(forKey: "totals") as? [String: Any])
        #expect(NSDictionary(dictionary: a).isEqual(to: b))
        #expect(totalsA["addresses_checked"] as? Int == totalsB["addresses_checked"] as? Int)
        #expect(totalsA["used_addresses"] as? Int == totalsB["used_addresses"] as? Int)
        let fromCheckpoint = try #require(totalsB["addresses_from_checkpoint"] as? Int)
        #expect(fromCheckpoint > 0)
        #expect(fromCheckpoint + (totalsB["addresses_queried"] as? Int ?? -1) == totalsB["addresses_checked"] as? Int)
    }

    @Test func luaScriptSource() throws {
        let (dir, index) = try Self.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("usage.lua").path
        try """
            local used = {}
            for line in io.lines(\"\(index)\") do used[line] = true end
            return function(addresses)
              local out = {}
              for i, a in ipairs(addresses) do out[i] = used[a] == true end
              return out
            end
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let viaLua = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "lua:\(script)", "--gap-limit", "5", "--csv"], environment: ["W": Self.words])
        let viaIndex = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:\(index)", "--gap-limit", "5", "--csv"], environment: ["W": Self.words])
        #expect(viaLua.status == 0, "\(viaLua.stderr)")
        #expect(viaLua.stdout == viaIndex.stdout)
        let bad = dir.appendingPathComponent("bad.lua").path
        try "return 42".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "lua:\(bad)"], environment: ["W": Self.words])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("must return a function(addresses)"))
    }

    @Test func cardVirtualWithStateFile() throws {
        let (dir, index) = try Self.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("card.json").path
        let setup = try Keyhost.run(["run", "-"], stdin: """
            local card, hd = require "keyhost.card", require "keyhost.hd"
            local s = card.open { reader = "virtual", state = "\(state)" }
            s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
            s:auto { pin = "123456", pairing_password = "KeycardTest" }
            s:load_seed(hd.mnemonic_to_seed("\(Self.words)"))
            s:close()
            """)
        #expect(setup.status == 0, "\(setup.stderr)")
        let env = ["KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest", "W": Self.words]
        let viaCard = try Keyhost.run(["discover", "--card", "virtual", "--card-state", state, "--source", "index:\(index)", "--gap-limit", "5", "--json"], environment: env)
        let viaSeed = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:\(index)", "--gap-limit", "5", "--json"], environment: env)
        #expect(viaCard.status == 0, "\(viaCard.stderr)")
        let card = try json(viaCard.stdout), seed = try json(viaSeed.stdout)
        #expect(NSArray(array: card["accounts"] as? [Any] ?? []).isEqual(to: seed["accounts"] as? [Any] ?? [1]))
        #expect(!viaCard.stdout.contains("123456") && !viaCard.stderr.contains("123456"))
        let table = try Keyhost.run(["discover", "--card", "virtual", "--card-state", state, "--source", "index:\(index)", "--gap-limit", "5"], environment: env)
        #expect(table.stdout.contains("card: 5 EXPORT KEY for 3 account(s)"))
        // The form every other command takes names the same card.
        let common = try Keyhost.run(["discover", "--card", "--reader", "virtual", "--card-state", state, "--source", "index:\(index)", "--gap-limit", "5", "--json"],
                                     environment: env)
        #expect(common.status == 0, "\(common.stderr)")
        #expect(NSArray(array: try json(common.stdout)["accounts"] as? [Any] ?? []).isEqual(to: card["accounts"] as? [Any] ?? [1]))
        let twice = try Keyhost.run(["discover", "--card", "virtual", "--reader", "virtual", "--source", "index:\(index)"], environment: env)
        #expect(twice.status == 64 && twice.stderr.contains("give the reader once"), "\(twice.stderr)")
        let alone = try Keyhost.run(["discover", "--reader", "virtual", "--mnemonic-env", "W", "--source", "index:\(index)"], environment: env)
        #expect(alone.status == 64 && alone.stderr.contains("--reader goes with --card"), "\(alone.stderr)")
    }

    @Test(arguments: [
        (["--xpub", "xpub661MyMwAqRbcF", "--mnemonic-env", "W", "--source", "index:x"], "exclude each other"),
        (["--mnemonic-env", "W", "--source", "index:x", "--gap-limit", "0"], "--gap-limit must be a positive integer (at least 1), got 0"),
        (["--mnemonic-env", "W", "--source", "index:x", "--change-gap-limit", "0"], "--change-gap-limit must be a positive integer (at least 1), got 0"),
        (["--mnemonic-env", "W", "--source", "index:x", "--account-gap", "0"], "--account-gap must be a positive integer (at least 1), got 0"),
        // A negative number is a value to refuse, not a flag the parser does not know ("Missing value").
        (["--mnemonic-env", "W", "--source", "index:x", "--gap-limit", "-1"], "--gap-limit must be a positive integer (at least 1), got -1"),
        (["--mnemonic-env", "W", "--source", "index:x", "--change-gap-limit", "-5"], "--change-gap-limit must be a positive integer (at least 1), got -5"),
        (["--mnemonic-env", "W", "--source", "index:x", "--account-gap", "-1"], "--account-gap must be a positive integer (at least 1), got -1"),
        (["--mnemonic-env", "W", "--source", "index:x", "--parallel", "-2"], "--parallel must be a positive integer (at least 1), got -2"),
        (["--mnemonic-env", "W", "--source", "index:x", "--retries", "-1"], "--retries must be 0 or more, got -1"),
        (["--mnemonic-env", "W", "--source", "index:x", "--accounts", "-1"], "--accounts takes A-B or A with numbers 0...2147483647, got \"-1\""),
        (["--mnemonic-env", "W", "--source", "index:x", "--indexes", "-3-5"], "--indexes takes A-B or A"),
        (["--mnemonic-env", "W", "--source", "index:x", "--max-addresses", "0"], "--max-addresses must be a positive integer (at least 1), got 0"),
        (["--mnemonic-env", "W", "--source", "index:x", "--max-addresses", "-1"], "--max-addresses must be a positive integer (at least 1), got -1"),
        (["--mnemonic-env", "W", "--source", "index:x", "--purpose", "-44"], "The value '-44' is invalid for '--purpose <n>'"),
        (["--mnemonic-env", "W", "--source", "nowhere"], "unknown usage source \"nowhere\""),
        (["--mnemonic-env", "W", "--source", "esplora:"], "needs a URL"),
        (["--mnemonic-env", "W", "--source", "index:x", "--json", "--csv"], "--json and --csv exclude each other"),
        (["--mnemonic-env", "W", "--source", "index:x", "--accounts", "5-2"], "--accounts 5-2"),
        (["--mnemonic-env", "W", "--source", "index:x", "--coin", "zzz"], "unknown coin \"zzz\""),
        (["--mnemonic-env", "W", "--source", "index:x", "--parallel", "0"], "--parallel must be a positive integer (at least 1), got 0"),
        // Bad values that need the scheme or the key decoded are usage errors too (issue 12: they exited 1).
        (["--mnemonic-env", "W", "--source", "index:x", "--purpose", "45"], "purpose 45 is not one of 44, 49, 84, 86"),
        (["--mnemonic-env", "W", "--source", "index:x", "--coin", "eth", "--purpose", "84"], "Ethereum uses purpose 44 only, not 84"),
        (["--xpub", "xpub661MyMwAqRbcFnotakey", "--source", "index:x"], "--xpub: invalid extended key"),
        (["--xpub", "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu", "--source", "index:x"], "PRIVATE key"),
    ] + privateKeysOfEveryVersion.map { (["--xpub", $0, "--source", "index:x"], "PRIVATE key") })
    func badOptionsAreUsageErrors(arguments: [String], message: String) throws {
        let run = try Keyhost.run(["discover"] + arguments, environment: ["W": Self.words])
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        // No part of a key given on the command line is echoed (20 characters of it would be too many).
        for argument in arguments where argument.count > 40 {
            let key = argument.trimmingCharacters(in: .whitespaces)
            #expect(!run.stderr.contains(key.dropFirst(4).prefix(20)), "\(run.stderr)")
        }
    }

    /// One master private key re-versioned (bip-utils' Base58Check) as Ltpv, dgpv, zprv with a leading space,
    /// ttpv, and an unknown version 0xDEADBEEF whose key data starts with the private 0x00 byte.
    static let privateKeysOfEveryVersion = [
        "Ltpv71G8qDifUiNetExQFUsQdYezsBDUaB814BhGZsphfZBrT3zqfeXTed3NqdFEoARcM1uJVNKbqmXwJscuMY753LZUtc36GiKqV5anTrnqWfr",
        "dgpv51eADS3spNJh98bWAfYnAW8K1gMy86HKmH1dpyT8kLsUKBqssT3jsLLFWyK4zbruL51UjejFDzrFzBcwjjA57rSv6D2978QigKG4xbCfJV6",
        " zprvAWgYBBk7JR8Gjrh4UJQ2uJdG1r3WNRRfURiABBE3RvMXYSrRJL62XuezvGdPvG6GFBZduosCc1YP5wixPox7zhZLfiUm8aunE96BBa4Kei5",
        "ttpv96BtqegdxXceQk8r9KuoG5yiMACLxANu9hh98NpMwpzcCa8XfrJ7uwnRBMzsE5n9y2exs7VQBBdHNiJ66BrDUWE28WoexgbFVRkRc2abBR9",
        "pGoh3VSiBwoWmRoSExBVSRonRkTSE7G3q8V2EDXZoZ17QvBAav1RiF43Cc8ccf6HrG7j6Es5GZTi3bBRBT3LB7hdHNHWWHKqq529AE3ev8KERAQS",
    ]

    @Test func runtimeErrorsExitOneWithAClearMessage() throws {
        let missing = try Keyhost.run(["discover", "--mnemonic-env", "NOT_SET_ANYWHERE", "--source", "index:x"])
        #expect(missing.status == 1)
        // The wording every command that takes a mnemonic uses.
        #expect(missing.stderr == "keyhost: the environment variable NOT_SET_ANYWHERE (the mnemonic, from --mnemonic-env) is not set or empty; "
                + "export NOT_SET_ANYWHERE=\"word1 word2 ...\"\n")
        let noFile = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:/nonexistent/used.txt"], environment: ["W": Self.words])
        #expect(noFile.status == 1)
        #expect(noFile.stderr.hasPrefix("keyhost: index file /nonexistent/used.txt: cannot be read"))
        let down = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "esplora:http://127.0.0.1:9", "--retries", "0"], environment: ["W": Self.words])
        #expect(down.status == 1)
        #expect(down.stderr.contains("cannot reach http://127.0.0.1:9"), "\(down.stderr)")
        let blank = try Keyhost.run(["discover", "--card", "virtual", "--source", "index:x"])
        #expect(blank.status == 1)
        #expect(blank.stderr.contains("the virtual card is blank"))
        #expect(blank.stderr.contains("keyhost card init"))
        // With --json the same failure has a kind a script can branch on.
        let blankJSON = try Keyhost.run(["discover", "--card", "virtual", "--source", "index:x", "--json"])
        let error = (try JSONSerialization.jsonObject(with: Data(blankJSON.stderr.utf8)) as? [String: Any])?["error"] as? [String: Any]
        #expect(error?["kind"] as? String == "not_initialized")
    }

    @Test func secretsAreNeverPrinted() throws {
        // On argv it is refused without being echoed; from the environment, a bad phrase is reported without its words.
        let argv = try Keyhost.run(["discover", "--mnemonic", Self.words, "--source", "index:x"])
        #expect(argv.status == 64)
        #expect(argv.stderr.contains("never taken on the command line"))
        #expect(!argv.stderr.contains("abandon") && !argv.stdout.contains("abandon"))
        let typo = Self.words.replacingOccurrences(of: "about", with: "abuot")
        let bad = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:x"], environment: ["W": typo])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("is not valid"))
        #expect(!bad.stderr.contains("abuot") && !bad.stderr.contains("abandon"), "\(bad.stderr)")
        let help = try Keyhost.run(["discover", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--mnemonic-env"))
        #expect(!help.stdout.contains("--mnemonic <"))
    }
}

/// Errors raised inside a usage source reach the user as their message, never as a Swift enum's text.
@Suite struct DiscoverErrorTextTests {
    @Test func aLuaSourceErrorPrintsItsMessageOnly() throws {
        let dir = try Keyhost.scratch(["usage.lua": "return function(addresses) return 42 end"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("usage.lua").path
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "lua:\(script)"], environment: ["W": DiscoverCommandTests.words])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("keyhost: usage source lua \(script) failed: usage function: returned a number, expected a list of booleans"), "\(run.stderr)")
        #expect(!run.stderr.contains("message("), "\(run.stderr)")
    }
}

/// An index file with an entry that is not an address of the coin stops the scan instead of reporting "0 used".
@Suite struct DiscoverIndexValidationTests {
    @Test func aStrayLineIsRefusedWithItsLineNumber() throws {
        let (dir, index) = try DiscoverCommandTests.indexFile()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("used-addresses.txt")
        try ("# used\n" + DiscoverCommandTests.used[0] + "\nhello world\n").write(to: bad, atomically: true, encoding: .utf8)
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:\(bad.path)"], environment: ["W": DiscoverCommandTests.words])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("keyhost: index file \(bad.path):3: \"hello world\" is not a Bitcoin address"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        let testnet = try Keyhost.run(["discover", "--mnemonic-env", "W", "--coin", "test", "--source", "index:\(index)"],
                                      environment: ["W": DiscoverCommandTests.words])
        #expect(testnet.status == 1)
        #expect(testnet.stderr.contains(":2: \"\(DiscoverCommandTests.used[0].prefix(20))…\" is a Bitcoin address, but the scan is for Bitcoin testnet"), "\(testnet.stderr)")
    }
}

/// A `lua:` usage function must answer one boolean per address asked; anything else stops the scan.
@Suite struct DiscoverLuaAnswerTests {
    @Test(arguments: [
        ("return {}", "returned 0 answers for 20 addresses"),
        ("local o = {} for i = 1, #a do o[i] = 'used' end return o", "answer #1 is a string, expected a boolean"),
        ("local o = {} for i = 1, #a do o[i] = false end o[3] = 1 return o", "answer #3 is a number, expected a boolean"),
        ("local o = {} for i = 1, #a - 1 do o[i] = true end return o", "returned 19 answers for 20 addresses"),
        // A set is the Lua API's other form; a lua: script's contract is the list alone.
        ("local o = {} for _, x in ipairs(a) do o[x] = true end return o", "answer #1 is nil, expected a boolean"),
        ("return 'all'", "returned a string, expected a list of booleans, one per address"),
    ])
    func malformedAnswersStopTheScan(body: String, message: String) throws {
        let dir = try Keyhost.scratch(["usage.lua": "return function(a) \(body) end"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("usage.lua").path
        let run = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "lua:\(script)"], environment: ["W": DiscoverCommandTests.words])
        #expect(run.status == 1)
        #expect(run.stderr == "keyhost: usage source lua \(script) failed: usage function: \(message)"
            + (message.hasPrefix("returned") && message.contains("answers") ? "; return one boolean per address, in order" : "")
            + "; the scan stops rather than count unknown addresses as unused\n", "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }
}

/// A scan whose source calls every address used ends at the address cap with a message saying how to raise it.
@Suite struct DiscoverAddressCapTests {
    @Test func everythingUsedStopsAtTheCap() throws {
        let dir = try Keyhost.scratch(["all.lua": "return function(a) local o = {} for i = 1, #a do o[i] = true end return o end"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("all.lua").path
        let checkpoint = dir.appendingPathComponent("cp.json").path
        let args = ["discover", "--mnemonic-env", "W", "--source", "lua:\(script)", "--checkpoint", checkpoint]
        let run = try Keyhost.run(args + ["--max-addresses", "300"], environment: ["W": DiscoverCommandTests.words])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("keyhost: the scan stopped after checking 300 addresses, the cap for one scan"), "\(run.stderr)")
        #expect(run.stderr.contains("raise the cap with --max-addresses N"))
        #expect(run.stdout.isEmpty)
        // The checkpoint keeps the answers: a rerun with a higher cap resumes from them.
        let more = try Keyhost.run(args + ["--max-addresses", "500", "--json"], environment: ["W": DiscoverCommandTests.words])
        #expect(more.status == 1)
        #expect(more.stderr.contains("after checking 500 addresses"), "\(more.stderr)")
    }
}
