// URL and Data only: FoundationEssentials (full Foundation would bring ICU).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import KeyhostHTTP
import KeyhostLedger
import KeyhostRecord
import KeyhostTokens

/// A ledger service (`keyhost token ledger serve`) reached over HTTP, as one more kind of ledger
/// connection: the command line and Lua deposit into it and read its totals the way they use a
/// database. The service checks the chains itself (its issuers are its own); what it answers is
/// read strictly, and a proof it returns is the caller's to verify.
public final class HTTPTokenLedger: TokenLedgerConnection {
    public let displayName: String
    /// The service knows its issuers; this side never needs them.
    public let issuerCount = 0
    private let base: URL
    private let timeout: Double
    private let proxies: ProxySettings
    private var closed = false

    /// The most chain text one request carries: well under the service's default 4 MiB body limit.
    public static let batchBytes = 3 << 20
    /// The most links one request carries: the service's default budget of links to verify per
    /// request (`--max-links-per-request`), so that no batch of this client is refused for it.
    public static let batchLinks = 1024
    /// How many times one request waits out a 429 `rate_limited`, each wait at most `maxRateWait` seconds.
    static let rateWaits = 8
    static let maxRateWait = 60

    /// `http://HOST:PORT` or `https://…`; `timeout` bounds each request, in seconds; `proxies` say which proxy
    /// carries the connections.
    public init(_ text: String, timeout: Double = 60, proxies: ProxySettings = .direct) throws {
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), let url = URL(string: text), url.host != nil else {
            throw LedgerError(kind: "location", message: "the ledger's address must be http://HOST:PORT, got \(String(text.prefix(80)).debugDescription)")
        }
        base = url
        displayName = url.absoluteString
        self.timeout = timeout
        self.proxies = proxies
    }

    /// Deposits in requests of at most `batchBytes` bytes and `batchLinks` links, results in order; callers give at most
    /// `TokenLedger.maxBatch` chains at once (`depositAll` splits larger lists).
    public func deposit(_ chains: [TokenChain]) throws -> [DepositResult<FraudProof>] {
        try live()
        var results: [DepositResult<FraudProof>] = []
        var batch: [String] = []
        var size = 0, links = 0
        func send() throws {
            var answer = try call("POST", "/v1/deposit", body: LedgerJSON.depositBody(batch))
            // Over this address's rate of verification the service says when to come back: wait
            // that long (a batch fits one full allowance) a few times before giving its error.
            for _ in 0..<Self.rateWaits {
                guard answer.status == 429, let wait = answer.object["error"]?["retry_after"]?.integerValue, (1...Self.maxRateWait).contains(wait) else { break }
                var pause = timespec(tv_sec: wait, tv_nsec: 0), left = timespec()
                while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                answer = try call("POST", "/v1/deposit", body: LedgerJSON.depositBody(batch))
            }
            let object = try expectOK(answer, shiftingBy: results.count)
            results += try LedgerJSON.depositResults(try LedgerJSON.parseResults(object, count: batch.count), from: displayName)
            batch = []
            size = 0
            links = 0
        }
        for chain in chains {
            let text = chain.armored
            if !batch.isEmpty && (size + text.utf8.count > Self.batchBytes || links + chain.transfers.count > Self.batchLinks) { try send() }
            batch.append(text)
            size += text.utf8.count + 4
            links += chain.transfers.count
        }
        if !batch.isEmpty { try send() }
        return results
    }

    public func stats() throws -> LedgerStats {
        try live()
        return try LedgerJSON.parseStats(try expectOK(try call("GET", "/v1/stats"), shiftingBy: 0))
    }

    public func close() { closed = true }

    private func live() throws {
        if closed { throw LedgerError(kind: "store", message: "\(displayName): the ledger is closed") }
    }

    /// The parsed JSON answer and its status; no answer, or one that is not JSON, is `unavailable`.
    private func call(_ method: String, _ path: String, body: Record? = nil) throws -> (status: Int, object: JSONValue) {
        let target = "\(method) \(displayName)\(path)"
        let answer: OneShotHTTP.Answer
        do {
            answer = try OneShotHTTP.send(method, base.appendingPathComponent(path), body: body.map { Data(LedgerJSON.encode($0)) },
                                          contentType: body == nil ? nil : "application/json", timeout: timeout,
                                          proxies: proxies)
        } catch {
            throw LedgerError(kind: "unavailable", message: "ledger \(target): \(error); is the ledger running?")
        }
        guard let object = try? JSONValue.parse([UInt8](answer.body), maxBytes: 256 << 20) else {
            throw LedgerError(kind: "protocol", message: "ledger \(target): the answer is not JSON (HTTP \(answer.status)); is it keyhost's ledger service?")
        }
        return (answer.status, object)
    }

    /// The answer's object when it is a 200; else the service's own error, its kind and the index of
    /// the chain it names (counted over every chain given, not just this request's) kept.
    private func expectOK(_ answer: (status: Int, object: JSONValue), shiftingBy offset: Int) throws -> JSONValue {
        guard answer.status == 200 else {
            guard let error = LedgerJSON.parseError(answer.object) else {
                throw LedgerError(kind: "protocol", message: "ledger \(displayName): HTTP \(answer.status) without an error message")
            }
            throw offset == 0 ? error : error.shifted(by: offset)
        }
        return answer.object
    }
}
