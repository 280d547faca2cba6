import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KeyhostCrypto
import KeyhostLedger
import KeyhostTestSupport
import KeyhostTokens
import Testing

/// One request must not buy minutes of the ledger's CPU (issue 31, D): 160 distinct 64-link chains
/// of one cash token, 3.9 MB, cost the service 47 CPU-seconds and 72 when sent again. Now each costs
/// it well under a second, and an honest deposit sent beside them is answered.
@Suite(.serialized) struct CostlyDepositTests {
    static let cash = TokenProgram(kind: .luaSource, code: Array(try! String(contentsOfFile: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("stdlib/keyhost/cash.lua").path, encoding: .utf8).utf8))

    /// `chain` handed on by keys[`from`] to `next`, with the receipt of the cash program's real run.
    static func pass(_ chain: TokenChain, from: Int, to next: PublicKey, time: Int64) throws -> TokenChain {
        let run = RunRequest(token: chain.token, arguments: .map([]), now: time, limits: .walletDefault, bytecodeAllowed: false,
                             transfers: chain.transfers, transferTo: next)
        guard case .completed(let effects, true) = Fixtures.programs.run(run) else { throw HarnessError("the cash program did not hand the token on") }
        return try chain.appending(to: next, time: time, effects: effects) { try ProtocolSignature.sign($0, with: Fixtures.keys[from]) }
    }

    /// `count` deposits of one cash token, each of 64 links made by runs of its program: 62 in common
    /// between keys[0] and keys[1], then keys[0] hands it to keys[1] at `count` different times, and
    /// keys[1] deposits it.
    static func forks(_ count: Int) throws -> [TokenChain] {
        let token = try SignedToken.issue(Token(id: Fixtures.randomID(), issuer: Fixtures.issuer.publicKey.xOnly, value: 100, unit: "EUR-cent",
                                                program: cash, holder: Fixtures.keys[0].publicKey), issuerKey: Fixtures.issuer)
        let start = Fixtures.now - 3600
        var common = TokenChain(token: token)
        for i in 0..<(TokenChain.maxLinks - 2) {
            common = try pass(common, from: i % 2, to: Fixtures.keys[(i + 1) % 2].publicKey, time: start + Int64(i))
        }
        return try (0..<count).map { j in
            let fork = try pass(common, from: 0, to: Fixtures.keys[1].publicKey, time: start + 100 + Int64(j))
            return try pass(fork, from: 1, to: Fixtures.depositKey(), time: start + 100 + Int64(j))
        }
    }

    /// CPU time (user and system, in seconds) of `pid` itself, and of its children reaped so far and
    /// every live descendant (the server's workers, where programs are re-run), from /proc.
    static func cpuSeconds(tree pid: pid_t) -> (own: Double, workers: Double) {
        var parents: [pid_t: pid_t] = [:], ticks: [pid_t: Int] = [:], reaped = 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let id = pid_t(entry), let stat = ProcFile.text("/proc/\(entry)/stat"), let close = stat.lastIndex(of: ")") else { continue }
            // After the command's ")": state ppid … utime stime cutime cstime (fields 3, 4, 14 to 17).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14, let parent = pid_t(fields[1]) else { continue }
            parents[id] = parent
            ticks[id] = fields[11...12].reduce(0) { $0 + (Int($1) ?? 0) }
            if id == pid { reaped = fields[13...14].reduce(0) { $0 + (Int($1) ?? 0) } }
        }
        func inTree(_ id: pid_t) -> Bool {
            var current = id
            for _ in 0..<64 {
                if current == pid { return true }
                guard let parent = parents[current], parent > 1 else { return false }
                current = parent
            }
            return false
        }
        let descendants = ticks.filter { $0.key != pid && inTree($0.key) }.values.reduce(0, +)
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (Double(ticks[pid] ?? 0) / hertz, Double(descendants + reaped) / hertz)
    }

    static func post(_ base: String, _ body: Data) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: base + "/v1/deposit")!)
        request.timeoutInterval = 900
        request.httpMethod = "POST"
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:])
    }

    /// The service's own CPU for a request it refuses: reading it. 3.9 MB of chains take about 0.2 s
    /// in a release build, but 1.5 to 2 s in a debug one (the tests' own), whose CBOR decoding is
    /// unoptimised Swift; either is far from the 47 s the re-runs and signature checks took.
    #if DEBUG
    static let readingAllowance = 8.0
    #else
    static let readingAllowance = 1.0
    #endif

    @Test func manyLongChainsCostTheServiceUnderASecond() async throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let (server, base) = try Child.ledgerServer(db: "sqlite:" + db, issuers: [ProcessTests.issuerHex])
        defer { server.kill(SIGTERM); server.wait() }
        let hostile = HTTPTests.body(try Self.forks(160).map(\.armored))
        #expect(hostile.count > 3_800_000 && hostile.count < 4 << 20, "the issue's request is 3.9 MB, under the 4 MiB cap: \(hostile.count)")
        let honest = try (0..<3).map { _ in HTTPTests.body([try Fixtures.deposit(try Fixtures.token()).armored]) }
        // The service's worker is started by a first deposit, outside the measures.
        #expect(try await Self.post(base, honest[0]).0 == 200)

        for attempt in 1...2 {
            let before = Self.cpuSeconds(tree: server.pid)
            async let beside = Self.post(base, honest[attempt])
            let (status, answer) = try await Self.post(base, hostile)
            let (honestStatus, honestAnswer) = try await beside
            let after = Self.cpuSeconds(tree: server.pid)
            let (own, workers) = (after.own - before.own, after.workers - before.workers)
            #expect(status == 413 && HTTPTests.error(answer).kind == "too_much_work", "attempt \(attempt): \(status) \(answer)")
            // No program is re-run for it: the workers only run the honest deposit's three links.
            #expect(workers < 1, "attempt \(attempt) cost the service's workers \(workers) s of CPU")
            #expect(own < Self.readingAllowance, "attempt \(attempt) cost the service \(own) s of CPU")
            #expect(honestStatus == 200 && (honestAnswer["results"] as? [[String: Any]])?.first?["result"] as? String == "accepted",
                    "attempt \(attempt): the honest deposit beside it: \(honestStatus) \(honestAnswer)")
        }
    }

    /// keyhost's client keeps within the service's limits: 600 chains of two links (1,200 links, one
    /// request's worth of bytes) go in requests of at most 1,024 links, and a request answered 429
    /// is sent again after the wait the service names.
    @Test func theClientSplitsByLinksAndWaitsOutItsRate() throws {
        let db = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        let (server, base) = try Child.ledgerServer(db: "sqlite:" + db, issuers: [ProcessTests.issuerHex], options: ["--links-per-second-per-client", "100"])
        defer { server.kill(SIGTERM); server.wait() }
        let chains = try (0..<600).map { _ in
            let held = try Fixtures.pass(TokenChain(token: try Fixtures.token()), from: 0, to: Fixtures.keys[1].publicKey)
            return try Fixtures.pass(held, from: 1, to: Fixtures.depositKey())
        }
        let file = try temporaryFile(chains.map(\.armored).joined(separator: "\n") + "\n")
        let client = try Child(Child.keyhost, ["token", "deposit", file, "--ledger", base])
        let status = client.wait()
        let lines = client.output.split(separator: "\n")
        #expect(status == 0 && lines.count == 600 && lines.allSatisfy { $0.hasSuffix("  accepted") }, "\(client.output.prefix(500))")
    }
}
