import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerServer
import KeyhostTokens
import Testing

/// The HTTP service in this process, on a free loopback port, over a real SQLite ledger.
@Suite struct HTTPTests {
    final class Running: @unchecked Sendable {
        let base: String
        let task: Task<Void, Error>
        init(base: String, task: Task<Void, Error>) { self.base = base; self.task = task }
    }

    static func start(maxBody: Int = 64 << 10) async throws -> Running {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        var server = LedgerServer(ledger: try TokenLedger(store: try SQLiteLedgerStore(path: path), issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run))
        server.maxBodyBytes = maxBody
        let configured = server
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await configured.run(host: "127.0.0.1", port: 0) { continuation.yield($0) } }
        for await port in ports { return Running(base: "http://127.0.0.1:\(port)", task: task) }
        throw HarnessError("the server did not start")
    }

    static func call(_ base: String, _ method: String, _ path: String, body: Data? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: base + path)!)
        // URLSession's default of 60 s was reached on a loaded 2-core machine (a deposit re-runs programs
        // in worker processes): a bound only a server that never answers reaches, not a speed.
        request.timeoutInterval = 900
        request.httpMethod = method
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return ((response as! HTTPURLResponse).statusCode, object)
    }

    static func body(_ chains: [String]) -> Data { try! JSONSerialization.data(withJSONObject: ["chains": chains]) }

    static func error(_ object: [String: Any]) -> (kind: String, message: String, index: Int?) {
        let inner = object["error"] as? [String: Any] ?? [:]
        return (inner["kind"] as? String ?? "", inner["message"] as? String ?? "", inner["index"] as? Int)
    }

    static func tokens(_ base: String) async throws -> Int {
        try await call(base, "GET", "/v1/stats").1["tokens"] as? Int ?? -1
    }

    @Test func depositStatsAndHealth() async throws {
        let server = try await Self.start()
        defer { server.task.cancel() }
        let token = try Fixtures.token(value: 42)
        let a = try Fixtures.deposit(token, via: 2), b = try Fixtures.deposit(token, via: 3)
        #expect(try await Self.call(server.base, "GET", "/v1/health").0 == 200)

        let (status, answer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([a.armored, a.armored, b.armored]))
        #expect(status == 200)
        let results = try #require(answer["results"] as? [[String: Any]])
        #expect(results.map { $0["result"] as? String } == ["accepted", "already_deposited", "double_spend"])
        #expect(results.allSatisfy { $0["token_id"] as? String == Hex.encode(token.token.id) })
        let proof = try FraudProof(armored: Array(try #require(results[2]["proof"] as? String).utf8))
        #expect(try proof.verify() == Fixtures.keys[1].publicKey)

        let stats = try await Self.call(server.base, "GET", "/v1/stats").1
        #expect(stats["tokens"] as? Int == 1 && stats["double_spends"] as? Int == 1)
        #expect((stats["units"] as? [[String: Any]])?.first?["total"] as? String == "42")
    }

    /// Each time bound of a deposit, through the service: 400 with its own kind, nothing recorded.
    @Test func linkTimesOutOfTheirBoundsAre400WithTheirKind() async throws {
        let server = try await Self.start()
        defer { server.task.cancel() }
        let now = Fixtures.now
        let cases: [(TokenChain, String, String)] = [
            (try Fixtures.deposit(try Fixtures.token(), times: [now - 60, now - 120, now - 100]), "invalid_chain", "before the time of the link it follows"),
            (try Fixtures.deposit(try Fixtures.token(), time: now + LinkTime.maxClockSkew + 3600), "future_time", "after the ledger's clock"),
            (try Fixtures.deposit(try Fixtures.token(policy: TokenPolicy(maxDepositAge: 3600)), time: now - 7200), "stale_deposit", "max_deposit_age"),
        ]
        for (chain, kind, words) in cases {
            let (status, answer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([chain.armored]))
            let e = Self.error(answer)
            #expect(status == 400 && e.kind == kind && e.index == 0 && e.message.contains(words), "\(kind): \(status) \(e)")
        }
        #expect(try await Self.tokens(server.base) == 0)
        let young = try Fixtures.deposit(try Fixtures.token(policy: TokenPolicy(maxDepositAge: 3600)), time: now - 1800)
        #expect(try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([young.armored])).0 == 200)
    }

    @Test func badRequestsAreJSONErrorsAndRecordNothing() async throws {
        let server = try await Self.start(maxBody: 64 << 10)
        defer { server.task.cancel() }
        let good = try Fixtures.deposit(try Fixtures.token()).armored

        // Larger than the limit: 413 before anything is parsed.
        let (big, bigAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([good] + Array(repeating: good, count: 100)))
        #expect(big == 413 && Self.error(bigAnswer).kind == "too_large")

        let (notJSON, notJSONAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Data("{\"chains\": [".utf8))
        #expect(notJSON == 400 && Self.error(notJSONAnswer).kind == "malformed_json")

        let (noChains, noChainsAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Data("{\"chain\": []}".utf8))
        #expect(noChains == 400 && Self.error(noChainsAnswer).message.contains("unknown field \"chain\""))

        // A garbled second chain: 400 naming position 1 and the problem; the good first one is not recorded.
        let (garbled, garbledAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([good, "khchain1:AAAA"]))
        let e = Self.error(garbledAnswer)
        #expect(garbled == 400 && e.kind == "invalid_chain" && e.index == 1 && e.message.hasPrefix("chain 1: not a valid chain"))

        let (notString, notStringAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Data("{\"chains\": [7]}".utf8))
        #expect(notString == 400 && Self.error(notStringAnswer).index == 0)

        let undeposited = try Fixtures.pass(TokenChain(token: try Fixtures.token()), from: 0, to: Fixtures.keys[1].publicKey)
        let (notDeposit, notDepositAnswer) = try await Self.call(server.base, "POST", "/v1/deposit", body: Self.body([good, undeposited.armored]))
        #expect(notDeposit == 400 && Self.error(notDepositAnswer).kind == "not_deposit" && Self.error(notDepositAnswer).index == 1)

        let (missing, missingAnswer) = try await Self.call(server.base, "GET", "/v1/nothing")
        #expect(missing == 404 && Self.error(missingAnswer).kind == "not_found")

        #expect(try await Self.tokens(server.base) == 0)
    }
}
