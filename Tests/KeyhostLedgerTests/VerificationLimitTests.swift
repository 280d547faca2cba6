import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KeyhostCrypto
import KeyhostLedger
@testable import KeyhostLedgerServer
import KeyhostTokens
import Synchronization
import Testing

/// What one request, and one client address, may ask the service to verify (issue 31, D): over the
/// per-request budget is 413 `too_much_work`, over the client's rate 429 `rate_limited` with
/// Retry-After, both before anything is verified; chains recorded before cost nothing.
@Suite struct VerificationLimitTests {
    final class Clock: Sendable {
        private let seconds = Mutex(1000.0)
        func now() -> Double { seconds.withLock { $0 } }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    @Test func allowanceFillsAtTheRateUpToOneFullRequest() {
        let clock = Clock()
        let rates = VerificationRates(limits: VerificationLimits(linksPerRequest: 1024, linksPerSecondPerClient: 256), clock: { clock.now() })
        #expect(rates.take(1024, for: "a") == nil)
        #expect(rates.take(1, for: "a") == 1)
        #expect(rates.take(1024, for: "b") == nil, "another address has its own allowance")
        // A refusal takes nothing: after 2 s, 512 links are there, and 600 would take 1 s more.
        clock.advance(2)
        #expect(rates.take(600, for: "a") == 1)
        #expect(rates.take(512, for: "a") == nil)
        #expect(rates.take(256, for: "a") == 1)
        // Refilled, never beyond one full request.
        clock.advance(3600)
        #expect(rates.take(1024, for: "a") == nil && rates.take(1, for: "a") == 1)
        #expect(rates.take(0, for: "a") == nil, "a request of recorded chains asks for nothing")
    }

    /// The allowances of clients that have not asked for a while are full: forgotten past a few
    /// thousand addresses (a fresh one is the same), while a spent one is kept.
    @Test func fullAllowancesAreForgotten() {
        let clock = Clock()
        let rates = VerificationRates(limits: VerificationLimits(linksPerRequest: 64, linksPerSecondPerClient: 1), clock: { clock.now() })
        for i in 0..<VerificationRates.pruneAbove { #expect(rates.take(1, for: "client \(i)") == nil) }
        #expect(rates.take(64, for: "heavy") == nil)
        #expect(rates.clients == VerificationRates.pruneAbove + 1)
        clock.advance(1)
        #expect(rates.take(64, for: "new") == nil)
        #expect(rates.clients == 2, "the full allowances were kept")
        #expect(rates.take(2, for: "heavy") == 1, "a spent allowance was forgotten")
    }

    @Test func optionsAreChecked() throws {
        #expect(throws: LimitError.self) { try VerificationLimits.resolve(linksPerRequest: 63, linksPerSecondPerClient: 1) }
        #expect(throws: LimitError.self) { try VerificationLimits.resolve(linksPerRequest: 64, linksPerSecondPerClient: 0) }
        #expect(try VerificationLimits.resolve(linksPerRequest: 64, linksPerSecondPerClient: 1) == VerificationLimits(linksPerRequest: 64, linksPerSecondPerClient: 1))
    }

    static func start(_ limits: VerificationLimits, clock: Clock = Clock()) async throws -> HTTPTests.Running {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).db").path
        var server = LedgerServer(ledger: try TokenLedger(store: try SQLiteLedgerStore(path: path), issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run))
        server.verificationLimits = limits
        server.rateClock = { clock.now() }
        let configured = server
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await configured.run(host: "127.0.0.1", port: 0) { continuation.yield($0) } }
        for await port in ports { return HTTPTests.Running(base: "http://127.0.0.1:\(port)", task: task) }
        throw HarnessError("the server did not start")
    }

    /// POST /v1/deposit: the status, the JSON answer and the Retry-After header.
    static func deposit(_ base: String, _ chains: [TokenChain]) async throws -> (Int, [String: Any], String?) {
        var request = URLRequest(url: URL(string: base + "/v1/deposit")!)
        request.timeoutInterval = 900
        request.httpMethod = "POST"
        request.httpBody = HTTPTests.body(chains.map(\.armored))
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        return (http.statusCode, try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:], http.value(forHTTPHeaderField: "Retry-After"))
    }

    @Test func budgetAndRateAreAnsweredBeforeVerifying() async throws {
        // 9 links a request (three 3-link chains), 1 link a second per client, on a clock that stands still.
        let clock = Clock()
        let server = try await Self.start(VerificationLimits(linksPerRequest: 9, linksPerSecondPerClient: 1), clock: clock)
        defer { server.task.cancel() }
        let chains = try (0..<4).map { _ in try Fixtures.deposit(try Fixtures.token()) }

        let (over, overAnswer, _) = try await Self.deposit(server.base, chains)
        let e = HTTPTests.error(overAnswer)
        #expect(over == 413 && e.kind == "too_much_work", "\(overAnswer)")
        #expect(e.message.contains("12 links") && e.message.contains("9 one request may ask for") && e.message.contains("send fewer chains per request"))
        #expect((overAnswer["error"] as? [String: Any])?["max_links_per_request"] as? Int == 9)
        #expect(try await HTTPTests.tokens(server.base) == 0)

        let (ok, okAnswer, _) = try await Self.deposit(server.base, Array(chains[..<3]))
        #expect(ok == 200, "\(okAnswer)")
        // Recorded chains cost nothing: answered at once however empty the allowance is.
        let (again, againAnswer, _) = try await Self.deposit(server.base, Array(chains[..<3]))
        #expect(again == 200 && (againAnswer["results"] as? [[String: Any]])?.map { $0["result"] as? String } == Array(repeating: "already_deposited", count: 3))

        // The allowance is spent: a new chain waits for it, told how long.
        let (limited, limitedAnswer, retryAfter) = try await Self.deposit(server.base, [chains[3]])
        #expect(limited == 429 && HTTPTests.error(limitedAnswer).kind == "rate_limited", "\(limitedAnswer)")
        let wait = try #require(retryAfter.flatMap(Int.init))
        #expect(wait == 3 && HTTPTests.error(limitedAnswer).message.contains("retry in 3 s"))
        #expect(try await HTTPTests.tokens(server.base) == 3)
        clock.advance(3)
        let (later, laterAnswer, _) = try await Self.deposit(server.base, [chains[3]])
        #expect(later == 200, "\(laterAnswer)")
    }
}
