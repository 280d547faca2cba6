import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Testing

/// `keyhost token deposit` straight into a SQLite ledger, `ledger stats` and `verify-proof`.
@Suite struct CLITests {
    func keyhost(_ arguments: [String]) throws -> (Int32, String) {
        let child = try Child(Child.keyhost, arguments)
        let status = child.wait()
        return (status, child.output)
    }

    @Test func directDepositStatsAndProofs() throws {
        let db = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let issuer = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)
        let token = try Fixtures.token(value: 9)
        let first = try temporaryFile(try Fixtures.deposit(token, via: 2).armored + "\n" + Fixtures.deposit(try Fixtures.token(value: 1)).armored + "\n")
        let second = try temporaryFile(try Fixtures.deposit(token, via: 3).armored + "\n")
        let id = Hex.encode(token.token.id)

        let (s1, o1) = try keyhost(["token", "deposit", first, "--ledger", db, "--issuer", issuer])
        #expect(s1 == 0 && o1.hasPrefix("\(id)  accepted\n") && o1.split(separator: "\n").count == 2, "\(o1)")
        let (s2, o2) = try keyhost(["token", "deposit", first, "--ledger", db, "--issuer", issuer])
        #expect(s2 == 0 && o2.hasPrefix("\(id)  already deposited\n"), "\(o2)")

        let proofs = FileManager.default.temporaryDirectory.appendingPathComponent("proofs-\(UUID().uuidString)").path
        // Given with a trailing slash, as shells complete a folder: the file's path still has one slash before its name.
        let (s3, o3) = try keyhost(["token", "deposit", second, "--ledger", db, "--issuer", issuer, "--proofs", proofs + "/", "--json"])
        #expect(s3 == 1, "\(o3)")
        let json = try JSONSerialization.jsonObject(with: Data(o3.utf8)) as? [String: Any]
        let row = try #require((json?["results"] as? [[String: Any]])?.first)
        #expect(row["result"] as? String == "double_spend" && row["signer"] as? String == Hex.encode(Fixtures.keys[1].publicKey.compressed))
        let proofFile = try #require(row["proof_file"] as? String)
        #expect(proofFile.hasPrefix(proofs + "/") && !proofFile.contains("//"), "\(proofFile)")

        let (s4, o4) = try keyhost(["token", "verify-proof", proofFile])
        #expect(s4 == 0 && o4.contains("token \(id)") && o4.contains("signed twice by \(Hex.encode(Fixtures.keys[1].publicKey.compressed))"), "\(o4)")
        // One character changed inside the proof: refused with exit 1.
        var text = Array(try String(contentsOfFile: proofFile, encoding: .utf8).utf8)
        text[text.count - 20] = text[text.count - 20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let (s5, o5) = try keyhost(["token", "verify-proof", try temporaryFile(String(decoding: text, as: UTF8.self))])
        #expect(s5 == 1 && o5.contains("not a valid double-spend proof"), "\(o5)")
        // Many files, as deposit and run take them: each verdict printed, exit 1 when any proof fails.
        let tampered = try temporaryFile(String(decoding: text, as: UTF8.self))
        let (sMany, oMany) = try keyhost(["token", "verify-proof", proofFile, tampered])
        #expect(sMany == 1 && oMany.contains("valid proof: token \(id)") && oMany.contains("\(tampered): not a valid double-spend proof"), "\(oMany)")
        let (sTwice, oTwice) = try keyhost(["token", "verify-proof", proofFile, proofFile])
        #expect(sTwice == 0 && oTwice.components(separatedBy: "valid proof: token \(id)").count == 3, "\(oTwice)")

        let (s6, o6) = try keyhost(["token", "ledger", "stats", "--db", db])
        #expect(s6 == 0 && o6 == "tokens deposited: 2\ndouble spends seen: 1\n  EUR-cent: 10 in 2 tokens\n", "\(o6)")

        // Without --issuer, direct mode says what to do.
        let (s7, o7) = try keyhost(["token", "deposit", first, "--ledger", db])
        #expect(s7 == 1 && o7.contains("--issuer"))
    }

    /// Through a ledger server (SQLite behind it): the client speaks keyhost's own HTTP, not
    /// URLSession, so deposit and stats must read the same answers as before.
    @Test func depositAndStatsOverHTTP() throws {
        let db = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let issuer = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)
        let (server, address) = try Child.ledgerServer(db: db, issuers: [issuer])
        defer { server.kill(SIGTERM); server.wait() }
        let token = try Fixtures.token(value: 7)
        let file = try temporaryFile(try Fixtures.deposit(token, via: 2).armored + "\n")
        let id = Hex.encode(token.token.id)

        let (s1, o1) = try keyhost(["token", "deposit", file, "--ledger", address])
        #expect(s1 == 0 && o1 == "\(id)  accepted\n", "\(o1)")
        let (s2, o2) = try keyhost(["token", "deposit", file, "--ledger", address])
        #expect(s2 == 0 && o2 == "\(id)  already deposited\n", "\(o2)")
        let (s3, o3) = try keyhost(["token", "ledger", "stats", "--ledger", address])
        #expect(s3 == 0 && o3 == "tokens deposited: 1\ndouble spends seen: 0\n  EUR-cent: 7 in 1 token\n", "\(o3)")
    }

    /// Lua reaches the same service with `token.ledger.open("http://…")`: deposits, a repeat, the
    /// totals, and a refusal that keeps the service's kind and the chain's index.
    @Test func luaDepositsThroughTheService() throws {
        let db = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let issuer = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)
        let (server, address) = try Child.ledgerServer(db: db, issuers: [issuer])
        defer { server.kill(SIGTERM); server.wait() }
        let token = try Fixtures.token(value: 7)
        let chain = try Fixtures.deposit(token, via: 2).armored
        let foreign = try Fixtures.deposit(try Fixtures.token(value: 3, issuer: Fixtures.otherIssuer), via: 1).armored
        let script = try temporaryFile("""
            local token = require "keyhost.token"
            local ledger <close> = token.ledger.open("\(address)")
            local first = ledger:deposit { "\(chain)" }
            local again = ledger:deposit { "\(chain)" }
            local stats = ledger:stats()
            local ok, err = pcall(ledger.deposit, ledger, { "\(chain)", "\(foreign)" })
            print(first[1].result, again[1].result, stats.tokens, stats.units[1].total, ok, err.kind, err.index)
            local down = pcall(function() return token.ledger.open("http://127.0.0.1:1"):stats() end)
            local _, unavailable = pcall(function() return token.ledger.open("http://127.0.0.1:1"):stats() end)
            print(down, unavailable.kind)
            """)
        let (status, output) = try keyhost(["run", script])
        #expect(status == 0, "\(output)")
        #expect(output == "accepted\talready_deposited\t1\t7\tfalse\tunknown_issuer\t2\nfalse\tunavailable\n", "\(output)")
    }

    /// Lua keeps double-spend proofs as files as `--proofs DIR` does (the same name, 0600, one proof a file), and the
    /// command line verifies what Lua wrote.
    @Test func luaKeepsProofFiles() throws {
        let db = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let issuer = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)
        let token = try Fixtures.token(value: 9)
        let first = try Fixtures.deposit(token, via: 2).armored, second = try Fixtures.deposit(token, via: 3).armored
        let proofs = FileManager.default.temporaryDirectory.appendingPathComponent("proofs-\(UUID().uuidString)").path
        let script = try temporaryFile("""
            local token = require "keyhost.token"
            local ledger <close> = token.ledger.open("\(db)", { issuers = { "\(issuer)" } })
            ledger:deposit { "\(first)" }
            local r = ledger:deposit({ "\(second)" }, { proofs = "\(proofs)" })[1]
            local again = ledger:deposit({ "\(second)" }, { proofs = "\(proofs)" })[1]
            print(r.result, r.proof_file, again.proof_file == r.proof_file)
            print(pcall(ledger.deposit, ledger, { "\(second)" }, { proof = "x" }))
            """)
        let (status, output) = try keyhost(["run", script])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        let fields = lines.first?.split(separator: "\t").map(String.init) ?? []
        #expect(fields.count == 3 && fields[0] == "double_spend" && fields[2] == "true", "\(output)")
        let path = try #require(fields.count == 3 ? fields[1] : nil)
        #expect(path.hasPrefix(proofs + "/" + Hex.encode(token.token.id) + ".") && path.hasSuffix(".khproof"))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(lines.count == 2 && lines[1].hasPrefix("false") && lines[1].contains("unknown option 'proof'"), "\(output)")
        let (verified, report) = try keyhost(["token", "verify-proof", path])
        #expect(verified == 0 && report.contains("signed twice by \(Hex.encode(Fixtures.keys[1].publicKey.compressed))"), "\(report)")
    }

    /// More chains than one transaction takes (`TokenLedger.maxBatch`): Lua's `ledger:deposit` splits them as the
    /// command line does (it used to refuse with `limit`), and a refusal in the second batch names its chain by
    /// its place in the whole list.
    @Test func luaDepositsMoreThanOneBatch() throws {
        let db = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let issuer = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)
        let many = try (0..<(TokenLedger.maxBatch + 1)).map { _ in try Fixtures.deposit(try Fixtures.token()).armored }
        let foreign = try Fixtures.deposit(try Fixtures.token(value: 3, issuer: Fixtures.otherIssuer)).armored
        let chains = try temporaryFile(many.joined(separator: "\n") + "\n")
        let mixed = try temporaryFile((many.prefix(TokenLedger.maxBatch + 3) + [foreign]).joined(separator: "\n") + "\n")
        let script = try temporaryFile("""
            local token = require "keyhost.token"
            local function read(path) local f <close> = assert(io.open(path)); return f:read("a") end
            local ledger <close> = token.ledger.open("\(db)", { issuers = { "\(issuer)" } })
            local results = ledger:deposit { read("\(chains)") }
            local accepted = 0
            for _, r in ipairs(results) do if r.result == "accepted" then accepted = accepted + 1 end end
            local ok, err = pcall(ledger.deposit, ledger, { read("\(mixed)") })
            print(#results, accepted, ledger:stats().tokens, ok, err.kind, err.index)
            """)
        let (status, output) = try keyhost(["run", script])
        #expect(status == 0, "\(output)")
        #expect(output == "\(TokenLedger.maxBatch + 1)\t\(TokenLedger.maxBatch + 1)\t\(TokenLedger.maxBatch + 1)\tfalse\tunknown_issuer\t\(TokenLedger.maxBatch + 2)\n",
                "\(output)")
    }

    /// Nothing listening: a one-line error naming the request and the cause, exit 1.
    @Test func ledgerNotRunning() throws {
        let (status, output) = try keyhost(["token", "ledger", "stats", "--ledger", "http://127.0.0.1:1"])
        #expect(status == 1)
        #expect(output.contains("ledger GET http://127.0.0.1:1/v1/stats: connection refused; is the ledger running?"), "\(output)")
    }
}
