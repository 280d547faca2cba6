import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostTokens
import Testing
import KeyhostTestSupport

/// keyhost reaches PostgreSQL through a `keyhost-ledger pipe` child (LedgerProcess): from Lua, from
/// the CLI and in process; what happens when the child or keyhost dies; what a missing
/// keyhost-ledger says.
@Suite(.serialized) struct LedgerProcessTests {
    static let issuerHex = Hex.encode(Fixtures.issuer.publicKey.xOnly.bytes)

    static func url(_ pg: PostgresHarness, _ db: PostgresLocation, password: String? = nil) -> String {
        "postgres://keyhost\(password.map { ":" + $0 } ?? "")@127.0.0.1:\(pg.port)/\(db.database)"
    }

    /// `keyhost -e SCRIPT`: its status and output (stdout and stderr together).
    static func lua(_ script: String, keyhost: String = Child.keyhost, environment: [String]? = nil) throws -> (Int32, String) {
        let child = try Child(keyhost, ["-e", script], environment: environment)
        return (child.wait(), child.output)
    }

    /// The pids of `parent`'s children running keyhost-ledger.
    static func ledgerChildren(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = ProcFile.text("/proc/\(pid)/stat"),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[1]) == parent && stat.contains("(keyhost-ledger)")
        }
    }

    /// Whether `pid` ignores `signal` (its SigIgn mask in /proc).
    static func ignores(_ pid: pid_t, _ signal: Int32) -> Bool {
        guard let status = ProcFile.text("/proc/\(pid)/status"),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// Running (not gone, not a zombie nobody reaped).
    static func alive(_ pid: pid_t) -> Bool {
        guard let stat = ProcFile.text("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    @Test func luaDepositsStatsAndDoubleSpendThroughTheChild() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let token = try Fixtures.token(value: 250)
        let first = try Fixtures.deposit(token, via: 2), other = try Fixtures.deposit(token, via: 3)
        let undeposited = try Fixtures.pass(TokenChain(token: try Fixtures.token()), from: 0, to: Fixtures.keys[1].publicKey)
        let script = """
            local token = require "keyhost.token"
            local hex = require "keyhost.hex"
            local ledger <close> = token.ledger.open("\(Self.url(pg, db))", { issuers = { "\(Self.issuerHex)" } })
            print("location", ledger:location(), tostring(ledger))
            print("first", ledger:deposit({ "\(first.armored)" })[1].result)
            print("again", ledger:deposit("\(first.armored)")[1].result)
            local row = ledger:deposit("\(other.armored)")[1]
            print("double", row.result, hex.encode(row.key), row.proof:sub(1, 9), hex.encode(row.token_id))
            local s = ledger:stats()
            print("stats", s.tokens, s.double_spends, s.units[1].total, s.units[1].tokens)
            local ok, err = pcall(ledger.deposit, ledger, { "\(first.armored)", "\(undeposited.armored)" })
            print("refused", ok, err.kind, tostring(err):find("chain 1: ", 1, true) ~= nil)
            ledger:close()
            print("closed", pcall(ledger.stats, ledger))
            """
        let (status, output) = try Self.lua(script)
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        let display = "postgres://keyhost@127.0.0.1:\(pg.port)/\(db.database)"
        #expect(lines.first == "location\t\(display)\tkeyhost.token.ledger(\(display), 1 issuer)", "\(output)")
        #expect(lines.contains("first\taccepted") && lines.contains("again\talready_deposited"), "\(output)")
        #expect(lines.contains("double\tdouble_spend\t\(Hex.encode(Fixtures.keys[1].publicKey.compressed))\tkhproof1:\t\(Hex.encode(token.token.id))"), "\(output)")
        #expect(lines.contains("stats\t1\t1\t250\t1"), "\(output)")
        #expect(lines.contains("refused\tfalse\tnot_deposit\ttrue"), "\(output)")
        #expect(lines.last?.hasPrefix("closed\tfalse\t") == true && output.contains("closed"), "\(output)")
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "1")
        #expect(try pg.query(db, "SELECT count(*) FROM double_spends") == "1")
    }

    /// `keyhost token deposit --ledger postgres://…` and `ledger stats --db postgres://…`: the same
    /// answers as with SQLite, and an error batch renumbered past the first thousand chains.
    @Test func cliDepositAndStatsThroughTheChild() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let url = Self.url(pg, db)
        let token = try Fixtures.token(value: 9)
        let id = Hex.encode(token.token.id)
        let first = try temporaryFile(try Fixtures.deposit(token, via: 2).armored + "\n" + Fixtures.deposit(try Fixtures.token(value: 1)).armored + "\n")
        let second = try temporaryFile(try Fixtures.deposit(token, via: 3).armored + "\n")

        let c1 = try Child(Child.keyhost, ["token", "deposit", first, "--ledger", url, "--issuer", Self.issuerHex])
        #expect(c1.wait() == 0 && c1.output.hasPrefix("\(id)  accepted\n") && c1.output.split(separator: "\n").count == 2, "\(c1.output)")
        let c2 = try Child(Child.keyhost, ["token", "deposit", second, "--ledger", url, "--issuer", Self.issuerHex, "--json"])
        #expect(c2.wait() == 1, "\(c2.output)")
        let json = try JSONSerialization.jsonObject(with: Data(c2.output.utf8)) as? [String: Any]
        let row = try #require((json?["results"] as? [[String: Any]])?.first)
        #expect(row["result"] as? String == "double_spend" && row["signer"] as? String == Hex.encode(Fixtures.keys[1].publicKey.compressed))

        let stats = try Child(Child.keyhost, ["token", "ledger", "stats", "--db", url])
        #expect(stats.wait() == 0 && stats.output == "tokens deposited: 2\ndouble spends seen: 1\n  EUR-cent: 10 in 2 tokens\n", "\(stats.output)")

        // 1001 chains go in two batches; the bad one in the second is named by its place in the file.
        let many = try (0..<1000).map { _ in try Fixtures.deposit(try Fixtures.token()).armored }
        let bad = try Fixtures.pass(TokenChain(token: try Fixtures.token()), from: 0, to: Fixtures.keys[1].publicKey).armored
        let file = try temporaryFile((many + [bad]).joined(separator: "\n") + "\n")
        let c3 = try Child(Child.keyhost, ["token", "deposit", file, "--ledger", url, "--issuer", Self.issuerHex])
        #expect(c3.wait() == 1 && c3.output.contains("keyhost: chain 1000: token ") && c3.output.contains("not a deposit"), "\(c3.output.suffix(500))")
    }

    /// A server that says no (a missing database, an unknown user, a wrong or missing password) is
    /// a `store` error giving its reason and what to do as soon as it answers, not after the 15 s
    /// connect limit: from the CLI (deposit and stats) and from Lua. Never the password.
    @Test func refusedConnectionIsAnErrorAtOnce() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase(owner: PostgresHarness.passwordUser)
        let server = "127.0.0.1:\(pg.port)", user = PostgresHarness.passwordUser
        let environment = LedgerProgram.environment(password: nil, worker: Fixtures.worker)
        let refusals: [(url: String, reason: String)] = [
            ("postgres://keyhost:hunter22@\(server)/no_such_db", """
                database "no_such_db" does not exist (SQLSTATE 3D000); create it (createdb -h 127.0.0.1 -p \(pg.port) -U keyhost no_such_db) \
                or name an existing database in the URL
                """),
            ("postgres://nobody:hunter22@\(server)/\(db.database)", #"role "nobody" does not exist (SQLSTATE 28000); check the user name nobody"#),
            ("postgres://\(user):hunter22@\(server)/\(db.database)",
             #"password authentication failed for user "\#(user)" (SQLSTATE 28P01); check the password of user \#(user)"#),
            ("postgres://\(user)@\(server)/\(db.database)", "it asks user \(user) for a password and none was given; put it in PGPASSWORD"),
        ]
        let chains = try temporaryFile(try Fixtures.deposit(try Fixtures.token()).armored + "\n")
        for (url, reason) in refusals {
            // The command line takes no password: the CLI gets it in PGPASSWORD. At once: the server's reason, not
            // the connect limit's message (which retrying would end in).
            let location = try PostgresLocation(url: url, environment: [:])
            let display = location.display
            for arguments in [["token", "ledger", "stats", "--db", display], ["token", "deposit", chains, "--ledger", display, "--issuer", Self.issuerHex]] {
                let child = try Child(Child.keyhost, arguments, environment: LedgerProgram.environment(password: location.password, worker: Fixtures.worker))
                #expect(child.wait() == 1)
                #expect(child.output.hasPrefix("keyhost: \(display): the server refused the connection: \(reason)"), "\(arguments[1]): \(child.output)")
                #expect(!child.output.contains("hunter22") && !child.output.contains("cannot connect within"), "\(child.output)")
            }
        }

        // Lua's token.ledger.open goes the same way.
        let (status, output) = try Self.lua("""
            local token = require "keyhost.token"
            local ok, err = pcall(token.ledger.open, "\(refusals[2].url)", { issuers = { "\(Self.issuerHex)" } })
            print(ok, err.kind, err.message)
            """, environment: environment)
        #expect(status == 0 && output.hasPrefix("false\tstore\tpostgres://\(user)@\(server)/\(db.database): the server refused the connection: \(refusals[2].reason)"), "\(output)")
        #expect(!output.contains("hunter22") && !output.contains("cannot connect within"))

        // The right password gets in (the refusals above are the server's, not the harness's).
        let stats = try Child(Child.keyhost, ["token", "ledger", "stats", "--db", "postgres://\(user)@\(server)/\(db.database)"],
                              environment: LedgerProgram.environment(password: PostgresHarness.password, worker: Fixtures.worker))
        #expect(stats.wait() == 0 && stats.output.hasPrefix("tokens deposited: 0\n"), "\(stats.output)")
    }

    /// A server that takes the connection and never answers: opening gives up after its 15 s limit
    /// and says where it tried.
    @Test func silentServerIsAnErrorAfterTheLimit() throws {
        let (silent, port) = try PostgresHarness.boundSocket(listening: 8)
        defer { close(silent) }
        let start = Date()
        let child = try Child(Child.keyhost, ["token", "ledger", "stats", "--db", "postgres://keyhost@127.0.0.1:\(port)/ledger"],
                              environment: LedgerProgram.environment(password: "hunter22", worker: Fixtures.worker))
        #expect(child.wait() == 1)
        let seconds = Date().timeIntervalSince(start)
        #expect(child.output == """
            keyhost: postgres://keyhost@127.0.0.1:\(port)/ledger: cannot connect within 15 s; is the server running and reachable at 127.0.0.1:\(port)?

            """, "\(child.output)")
        // Not before the limit; the upper bound only catches a wait that never ends.
        #expect(seconds > 14 && seconds < patienceSeconds, "\(seconds) s")
    }

    /// The password in the URL goes to the child in PGPASSWORD, not on its command line.
    @Test func passwordGoesInTheEnvironmentNotArgv() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let ledger = try LedgerProcess(location: try PostgresLocation(url: Self.url(pg, db, password: "pa%3Ass")), issuers: [Fixtures.issuer.publicKey.xOnly], worker: Fixtures.worker)
        defer { ledger.close() }
        let cmdline = try #require(ProcFile.text("/proc/\(ledger.pid)/cmdline"))
        #expect(cmdline.contains("keyhost-ledger\0pipe\0--db\0postgres://keyhost@127.0.0.1:\(pg.port)/\(db.database)\0--issuer\0\(Self.issuerHex)"), "\(cmdline)")
        #expect(!cmdline.contains("pa"))
        let environment = try #require(ProcFile.text("/proc/\(ledger.pid)/environ"))
        #expect(environment.split(separator: "\0").contains("PGPASSWORD=pa:ss"))
        #expect(try ledger.stats().tokens == 0)
    }

    /// A child killed mid-session: the next call is a store error saying how it ended, at once, and
    /// so is every call after it; close does not hang.
    @Test func killedChildIsAClearErrorNotAHang() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let ledger = try LedgerProcess(location: try PostgresLocation(url: Self.url(pg, db)), issuers: [Fixtures.issuer.publicKey.xOnly], worker: Fixtures.worker)
        #expect(try ledger.deposit([try Fixtures.deposit(try Fixtures.token())]).map(\.name) == ["accepted"])
        kill(ledger.pid, SIGKILL)
        let start = Date()
        for _ in 0..<2 {
            #expect {
                _ = try ledger.deposit([try Fixtures.deposit(try Fixtures.token())])
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == "store" && error.message.contains("keyhost-ledger (pid \(ledger.pid)) was killed by signal 9 (SIGKILL) while depositing")
                    && error.message.contains("send it again")
            }
        }
        #expect(throws: LedgerError.self) { try ledger.stats() }
        ledger.close()
        #expect(Date().timeIntervalSince(start) < patienceSeconds)
        #expect(!Self.alive(ledger.pid))
    }

    /// Ctrl-C in a terminal reaches keyhost's whole process group: the child ignores it, so a
    /// ledger opened at the REPL survives a Ctrl-C at the prompt.
    @Test func childIgnoresSIGINT() throws {
        let pg = try PostgresHarness.get()
        let ledger = try LedgerProcess(location: try PostgresLocation(url: Self.url(pg, try pg.newDatabase())), issuers: [Fixtures.issuer.publicKey.xOnly], worker: Fixtures.worker)
        defer { ledger.close() }
        // An ignored signal is discarded when it is sent, so nothing is left to wait for after kill.
        #expect(Self.ignores(ledger.pid, SIGINT))
        kill(ledger.pid, SIGINT)
        #expect(Self.alive(ledger.pid))
        #expect(try ledger.deposit([try Fixtures.deposit(try Fixtures.token())]).map(\.name) == ["accepted"])
    }

    /// keyhost killed with SIGKILL while it holds a PostgreSQL ledger: its child goes too.
    @Test func childDiesWithKeyhost() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let script = """
            local token = require "keyhost.token"
            local ledger = token.ledger.open("\(Self.url(pg, db))", { issuers = { "\(Self.issuerHex)" } })
            print("open", ledger:stats().tokens)
            io.stdout:flush()
            local t = os.time()
            while os.time() - t < 60 do end
            """
        let keyhost = try Child(Child.keyhost, ["-e", script])
        _ = eventually { keyhost.output.contains("open\t0") }
        let children = Self.ledgerChildren(of: keyhost.pid)
        try #require(keyhost.output.contains("open\t0") && children.count == 1, "\(keyhost.output) \(children)")
        keyhost.kill(SIGKILL)
        keyhost.wait()
        _ = eventually { !Self.alive(children[0]) }
        #expect(!Self.alive(children[0]), "keyhost-ledger \(children[0]) outlived keyhost")
    }

    /// keyhost killed with SIGKILL while its child waits inside a deposit's transaction (another
    /// transaction holds the batch's last token id): the child goes at once, and once the wait
    /// ends PostgreSQL has rolled the batch back, none of its rows recorded.
    @Test func childDiesWithKeyhostMidDeposit() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let url = Self.url(pg, db)
        let stats = try Child(Child.keyhost, ["token", "ledger", "stats", "--db", url])  // creates the tables
        try #require(stats.wait() == 0, "\(stats.output)")
        // Deposits go in token-id order: the first two are inserted before the third waits.
        let chains = try [0x00, 0x01, 0xff].map { first -> TokenChain in
            var id = Fixtures.randomID()
            id[0] = UInt8(first)
            return try Fixtures.deposit(try Fixtures.token(id: id))
        }
        let holder = try pg.holdRow(chains[2].token.token.id, in: db, name: "keyhost-test-holder")
        let release = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'keyhost-test-holder'"
        defer { _ = try? pg.query(db, release) }

        let script = """
            local token = require "keyhost.token"
            local ledger = token.ledger.open("\(url)", { issuers = { "\(Self.issuerHex)" } })
            print("open")
            io.stdout:flush()
            ledger:deposit({ "\(chains[1].armored)", "\(chains[2].armored)", "\(chains[0].armored)" })
            print("deposited")
            """
        let keyhost = try Child(Child.keyhost, ["-e", script])
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO deposits%'"
        try #require(try pg.waitFor(db, waiting, toBe: "1"), "\(keyhost.output)")
        let children = Self.ledgerChildren(of: keyhost.pid)
        try #require(children.count == 1 && keyhost.output == "open\n", "\(keyhost.output) \(children)")

        keyhost.kill(SIGKILL)
        keyhost.wait()
        _ = eventually { !Self.alive(children[0]) }
        #expect(!Self.alive(children[0]), "keyhost-ledger \(children[0]) outlived keyhost while waiting in a deposit")

        // The holder's transaction ends (rolled back): the child's INSERT could go on, but its
        // connection is closed, so PostgreSQL rolls its transaction back.
        _ = try pg.query(db, release)
        holder.wait()
        let others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        #expect(try pg.waitFor(db, others, toBe: "0"), "a connection to \(db.database) stayed open")
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "0")
    }

    /// A keyhost without keyhost-ledger beside it or on PATH: `serve` and a postgres:// ledger say
    /// what is missing and how to get it; SQLite still works in process.
    @Test func missingKeyhostLedgerIsAClearError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lonely-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let lonely = folder + "/keyhost"
        try FileManager.default.copyItem(atPath: Child.keyhost, toPath: lonely)
        let environment = ["PATH=/usr/bin:/bin", "HOME=\(folder)"]

        let serve = try Child(lonely, ["token", "ledger", "serve", "--listen", "127.0.0.1:0", "--db", "sqlite:\(folder)/l.db", "--issuer", Self.issuerHex],
                              environment: environment)
        #expect(serve.wait() == 1)
        #expect(serve.output.hasPrefix("keyhost: the ledger program keyhost-ledger is not installed: not next to this keyhost (\(folder)) nor on PATH"), "\(serve.output)")
        #expect(serve.output.contains("scripts/install") && serve.output.contains("swift build --product keyhost-ledger"))

        let (status, output) = try Self.lua("""
            local token = require "keyhost.token"
            local ok, err = pcall(token.ledger.open, "postgres://keyhost@127.0.0.1:1/x", { issuers = { "\(Self.issuerHex)" } })
            print(ok, err.kind, err.message)
            local sqlite <close> = token.ledger.open("sqlite:\(folder)/lua.db", { issuers = { "\(Self.issuerHex)" } })
            print("sqlite", sqlite:stats().tokens)
            """, keyhost: lonely, environment: environment)
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("false\tstore\tthe ledger program keyhost-ledger is not installed"), "\(output)")
        #expect(output.hasSuffix("sqlite\t0\n"), "\(output)")
    }

    /// A store failure behind the HTTP service: the client is told only that the database failed
    /// (not which database, nor why), and the operator's standard error gets the whole reason.
    @Test func storeFailureIsForTheOperatorNotTheClient() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let (server, address) = try Child.ledgerServer(db: Self.url(pg, db), issuers: [Self.issuerHex])
        defer { server.kill(SIGTERM); server.wait() }
        _ = try pg.query(db, "ALTER TABLE deposits RENAME TO deposits_moved")
        let stats = try Child(Child.keyhost, ["token", "ledger", "stats", "--ledger", address])
        #expect(stats.wait() != 0)
        #expect(stats.output.contains("the ledger's database failed; try again"), "\(stats.output)")
        #expect(!stats.output.contains(db.database) && !stats.output.contains("deposits"), "\(stats.output)")
        _ = eventually { server.output.contains("keyhost-ledger: the ledger's database failed:") }
        let logged = server.output.components(separatedBy: "\n").first { $0.hasPrefix("keyhost-ledger: the ledger's database failed:") } ?? ""
        #expect(logged.contains(db.database) && logged.contains("relation \"deposits\" does not exist") && logged.contains("42P01"), "\(server.output)")
    }

    /// `keyhost token ledger serve` becomes keyhost-ledger (same pid, execve); a password on its command line is refused.
    @Test func serveExecsKeyhostLedger() throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let refused = try Child(Child.keyhost, ["token", "ledger", "serve", "--listen", "127.0.0.1:0", "--db", Self.url(pg, db, password: "sekrit"),
                                                "--issuer", Self.issuerHex])
        #expect(refused.wait() == 1 && refused.output.contains("put the password in the PGPASSWORD environment variable"), "\(refused.output)")
        #expect(!refused.output.contains("sekrit"))
        let (server, address) = try Child.ledgerServer(db: Self.url(pg, db), issuers: [Self.issuerHex])
        defer { server.kill(SIGTERM); server.wait() }
        let cmdline = try #require(ProcFile.text("/proc/\(server.pid)/cmdline"))
        #expect(cmdline.hasSuffix("keyhost-ledger\0serve\0--listen\0127.0.0.1:0\0--db\0postgres://keyhost@127.0.0.1:\(pg.port)/\(db.database)\0--max-body-kib\04096\0--request-timeout\060.0\0--max-connections-per-client\032\0--max-links-per-request\01024\0--links-per-second-per-client\064\0--issuer\0\(Self.issuerHex)\0"), "\(cmdline)")
        #expect(!cmdline.contains("sekrit"))
        let stats = try Child(Child.keyhost, ["token", "ledger", "stats", "--ledger", address])
        #expect(stats.wait() == 0 && stats.output.hasPrefix("tokens deposited: 0\n"), "\(stats.output)")
        // SIGTERM reaches the server itself: it stops cleanly.
        server.kill(SIGTERM)
        #expect(server.wait() == 0)
    }
}
