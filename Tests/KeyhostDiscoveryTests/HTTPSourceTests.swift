import Foundation
import KeyhostTestSupport
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery

/// Esplora's answer for an address with `chain` confirmed and `mempool` unconfirmed transactions.
func esploraBody(_ address: String, chain: Int, mempool: Int) -> String {
    """
    {"address":"\(address)","chain_stats":{"funded_txo_count":\(chain),"funded_txo_sum":\(chain * 1000),"spent_txo_count":0,\
    "spent_txo_sum":0,"tx_count":\(chain)},"mempool_stats":{"funded_txo_count":\(mempool),"funded_txo_sum":0,"spent_txo_count":0,\
    "spent_txo_sum":0,"tx_count":\(mempool)}}
    """
}

@Suite("Esplora usage source", .serialized)
struct EsploraTests {
    @Test("A BIP84 scan over Esplora finds confirmed and mempool-only usage, with bounded parallelism")
    func scan() throws {
        let confirmed = try TestWallet.bip84(index: 2), pending = try TestWallet.bip84(change: 1, index: 0)
        let server = try TestHTTPServer { request in
            let address = String(request.path.dropFirst("/address/".count))
            guard request.method == "GET", request.path.hasPrefix("/address/") else { return .json("{}", status: 404) }
            Thread.sleep(forTimeInterval: 0.002)  // let requests overlap
            return .json(esploraBody(address, chain: address == confirmed ? 3 : 0, mempool: address == pending ? 1 : 0))
        }
        defer { server.stop() }
        let source = try EsploraUsageSource(baseURL: server.baseURL + "/", http: HTTPOptions(maxConcurrentRequests: 3, timeout: 5))
        let result = try DiscoveryEngine(scheme: try .bip(purpose: 84, coin: .bitcoin), keys: try TestWallet.keys(), usage: source,
                                         options: DiscoveryOptions(receiveGapLimit: 5, changeGapLimit: 5)).run()
        #expect(result.usedAddresses.map(\.address) == [confirmed, pending])
        #expect(server.requests.count == result.totals.addressesChecked)
        #expect(server.maxInFlight <= 3)
        #expect(server.requests.allSatisfy { $0.headers["user-agent"] == "keyhost-discovery" })
        #expect(result.usageSource == "esplora \(server.baseURL)/")
    }

    @Test("429 with Retry-After in seconds and as an HTTP date is honoured")
    func retryAfter() throws {
        let counter = Counter()
        let date = Date().addingTimeInterval(30)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let server = try TestHTTPServer { request in
            switch counter.bump("all") {
            case 1: return .respond(status: 429, headers: ["Retry-After": "7"], body: "slow down")
            case 2: return .respond(status: 429, headers: ["Retry-After": formatter.string(from: date)], body: "slow down")
            default: return .json(esploraBody("x", chain: 1, mempool: 0))
            }
        }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EsploraUsageSource(baseURL: server.baseURL, http: HTTPOptions(timeout: 120, sleep: sleeps.sleep))
        #expect(try source.usage(of: ["bc1qexample"]) == [true])
        #expect(server.requests.count == 3)
        #expect(sleeps.delays.count == 2)
        #expect(sleeps.delays.first == 7)
        #expect((25...31).contains(sleeps.delays.last ?? 0), "\(sleeps.delays)")
        #expect(HTTPClient.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: Date(timeIntervalSince1970: 784_111_770)) == 7)
        #expect(HTTPClient.retryAfter("soon", now: Date()) == nil)
    }

    @Test("500s then success: retried with exponential backoff; 500 forever is an error naming URL and address")
    func serverErrors() throws {
        let counter = Counter()
        let server = try TestHTTPServer { request in
            if request.path.hasSuffix("/flaky"), counter.bump("flaky") <= 2 { return .respond(status: 503, headers: [:], body: "busy") }
            if request.path.hasSuffix("/broken") { return .respond(status: 500, headers: [:], body: "internal error") }
            return .json(esploraBody("x", chain: 0, mempool: 0))
        }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EsploraUsageSource(baseURL: server.baseURL, http: HTTPOptions(timeout: 120, maxRetries: 3, initialBackoff: 0.25, sleep: sleeps.sleep))
        #expect(try source.usage(of: ["flaky"]) == [false])
        #expect(sleeps.delays == [0.25, 0.5])
        let error = discoveryError { _ = try source.usage(of: ["broken"]) }
        #expect(error == .httpStatus(url: server.baseURL + "/address/broken", address: "broken", status: 500, body: "internal error"))
        #expect(server.requests.filter { $0.path.hasSuffix("/broken") }.count == 4, "one attempt and 3 retries")
        // A 4xx is not retried.
        let bad = try TestHTTPServer { _ in .respond(status: 400, headers: [:], body: "Invalid Bitcoin address") }
        defer { bad.stop() }
        let badSource = try EsploraUsageSource(baseURL: bad.baseURL, http: HTTPOptions(timeout: 120, sleep: sleeps.sleep))
        #expect(discoveryError { _ = try badSource.usage(of: ["nope"]) }?.description.contains("HTTP 400 for nope: Invalid Bitcoin address") == true)
        #expect(bad.requests.count == 1)
    }

    @Test("A timeout and a refused connection are 'unreachable', never 'unused'")
    func unreachable() throws {
        let server = try TestHTTPServer { _ in .hang }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EsploraUsageSource(baseURL: server.baseURL, http: HTTPOptions(timeout: 1, maxRetries: 1, sleep: sleeps.sleep))
        let start = Date()
        let error = discoveryError { _ = try source.usage(of: ["bc1qslow"]) }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 1.8 && elapsed < 60, "two attempts of 1 s each (bounded, whatever the load), took \(elapsed)")
        #expect(sleeps.delays == [0.5], "a timeout is retried after the backoff")
        guard case .unreachable(let url, let address, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(url == server.baseURL + "/address/bc1qslow" && address == "bc1qslow")
        #expect(detail.contains("timed out"), "\(detail)")
        #expect(server.requests.count == 2)

        // A port nobody listens on.
        let closed = try TestHTTPServer { _ in .hang }
        let port = closed.port
        closed.stop()
        let refused = try EsploraUsageSource(baseURL: "http://127.0.0.1:\(port)", http: HTTPOptions(timeout: 2, maxRetries: 0))
        let refusal = discoveryError { _ = try refused.usage(of: ["bc1qa"]) }
        guard case .unreachable = refusal else { Issue.record("got \(String(describing: refusal))"); return }
    }

    @Test("Malformed JSON and the wrong shape are errors, not 'unused'", arguments: [
        ("{not json", "not JSON"),
        ("", "empty body"),
        ("[]", "expected a JSON object"),
        ("{\"chain_stats\":{}}", "chain_stats.tx_count"),
        ("{\"chain_stats\":{\"tx_count\":0}}", "mempool_stats.tx_count"),
        ("{\"chain_stats\":{\"tx_count\":\"0\"},\"mempool_stats\":{\"tx_count\":0}}", "chain_stats.tx_count"),
    ])
    func malformed(body: String, message: String) throws {
        let server = try TestHTTPServer { _ in .json(body) }
        defer { server.stop() }
        let source = try EsploraUsageSource(baseURL: server.baseURL, http: HTTPOptions(timeout: 120))
        let error = discoveryError { _ = try source.usage(of: ["bc1qodd"]) }
        guard case .malformedResponse(let url, let address, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(url == server.baseURL + "/address/bc1qodd" && address == "bc1qodd")
        #expect(detail.contains(message), "\(detail)")
    }

    @Test("Bad base URLs and options are rejected")
    func badOptions() throws {
        #expect(discoveryError { _ = try EsploraUsageSource(baseURL: "ftp://example") } != nil)
        #expect(discoveryError { _ = try EsploraUsageSource(baseURL: "http://127.0.0.1:1", http: HTTPOptions(maxConcurrentRequests: 0)) } != nil)
    }
}

@Suite("Ethereum JSON-RPC usage source", .serialized)
struct EthereumRPCTests {
    /// A node answering eth_getTransactionCount / eth_getBalance from tables, batch answers in reverse order.
    static func node(nonces: [String: Int], balances: [String: String], extra: @escaping ([String: Any]) -> [String: Any]? = { _ in nil })
        throws -> TestHTTPServer {
        try TestHTTPServer { request in
            guard request.method == "POST", request.headers["content-type"] == "application/json",
                  let calls = request.json as? [[String: Any]] else { return .json("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request\"}}") }
            var answers = [[String: Any]]()
            for call in calls {
                if let special = extra(call) { answers.append(special); continue }
                let params = call["params"] as? [String] ?? []
                let address = params.first?.lowercased() ?? ""
                guard params.count == 2, params[1] == "latest", call["jsonrpc"] as? String == "2.0" else {
                    answers.append(["jsonrpc": "2.0", "id": call["id"]!, "error": ["code": -32602, "message": "invalid params"]]); continue
                }
                let result: String
                switch call["method"] as? String {
                case "eth_getTransactionCount": result = "0x" + String(nonces[address] ?? 0, radix: 16)
                case "eth_getBalance": result = balances[address] ?? "0x0"
                default: result = "0x0"
                }
                answers.append(["jsonrpc": "2.0", "id": call["id"]!, "result": result])
            }
            return .json(object: Array(answers.reversed()))
        }
    }

    @Test("Ethereum scan over batched JSON-RPC: nonce or balance marks an address used")
    func scan() throws {
        let sender = try TestWallet.ethereum("m/44'/60'/0'/0/1"), receiver = try TestWallet.ethereum("m/44'/60'/0'/0/6")
        let server = try Self.node(nonces: [sender.lowercased(): 5], balances: [receiver.lowercased(): "0x1bc16d674ec80000"])
        defer { server.stop() }
        let source = try EthereumRPCUsageSource(url: server.baseURL + "/rpc", addressesPerRequest: 4, http: HTTPOptions(timeout: 120))
        let result = try DiscoveryEngine(scheme: try .ethereum(), keys: try TestWallet.keys(), usage: source,
                                         options: DiscoveryOptions(receiveGapLimit: 8)).run()
        #expect(result.usedAddresses.map(\.address) == [sender, receiver])
        #expect(result.accounts.count == 2)
        let sizes = server.requests.map { ($0.json as? [Any])?.count ?? -1 }
        #expect(sizes.allSatisfy { $0 > 0 && $0 <= 8 && $0 % 2 == 0 }, "\(sizes)")
        #expect(sizes.reduce(0, +) == 2 * result.totals.addressesChecked)
        #expect(server.requests.allSatisfy { $0.path == "/rpc" })
    }

    @Test("A per-item error names the address; a rate-limit error is retried")
    func itemErrors() throws {
        let bad = "0x00000000000000000000000000000000000000bd"
        let counter = Counter()
        let server = try Self.node(nonces: [:], balances: [:]) { call in
            let address = ((call["params"] as? [String])?.first ?? "").lowercased()
            if address == bad, call["method"] as? String == "eth_getBalance" {
                return ["jsonrpc": "2.0", "id": call["id"]!, "error": ["code": -32000, "message": "header not found"]]
            }
            if address == "0x00000000000000000000000000000000000000aa", counter.bump("limit") == 1 {
                return ["jsonrpc": "2.0", "id": call["id"]!, "error": ["code": -32005, "message": "limit exceeded"]]
            }
            return nil
        }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EthereumRPCUsageSource(url: server.baseURL, http: HTTPOptions(timeout: 120, sleep: sleeps.sleep))
        #expect(try source.usage(of: ["0x00000000000000000000000000000000000000aa", "0x00000000000000000000000000000000000000ab"]) == [false, false])
        #expect(sleeps.delays.count == 1)
        let error = discoveryError { _ = try source.usage(of: ["0x00000000000000000000000000000000000000ac", bad]) }
        #expect(error == .serviceError(url: server.baseURL, address: bad, detail: "eth_getBalance: -32000 header not found"))
    }

    @Test("Nonsense answers are errors", arguments: [
        ("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x0\"}", "expected a JSON-RPC batch"),
        ("[{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x0\"}]", "no answer to eth_getBalance"),
        ("[{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"12\"},{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x0\"}]", "not a hex quantity"),
        ("[{\"jsonrpc\":\"2.0\",\"result\":\"0x0\"}]", "no numeric id"),
        ("<html>bad gateway</html>", "not JSON"),
    ])
    func nonsense(body: String, message: String) throws {
        let server = try TestHTTPServer { _ in .json(body) }
        defer { server.stop() }
        let source = try EthereumRPCUsageSource(url: server.baseURL, http: HTTPOptions(timeout: 120))
        let error = discoveryError { _ = try source.usage(of: ["0x00000000000000000000000000000000000000aa"]) }
        guard case .malformedResponse(let url, let address, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(url == server.baseURL && address == "0x00000000000000000000000000000000000000aa")
        #expect(detail.contains(message), "\(detail)")
    }

    @Test("Hex quantities")
    func quantities() {
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0x0") == false)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0x000") == false)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0x1") == true)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0xffffffffffffffffffffffffffffffffffff") == true)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0x") == nil)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("0xg") == nil)
        #expect(EthereumRPCUsageSource.isNonZeroQuantity("1") == nil)
    }
}

@Suite("Etherscan usage source", .serialized)
struct EtherscanTests {
    static let tx = "{\"blockNumber\":\"14923678\",\"hash\":\"0xabc\",\"from\":\"0x1\",\"to\":\"0x2\",\"value\":\"1000\",\"isError\":\"0\"}"

    @Test("txlist answers: a transaction is used, 'No transactions found' is unused, rate limits are retried")
    func scan() throws {
        let used = try TestWallet.ethereum("m/44'/60'/0'/0/2")
        let counter = Counter()
        let server = try TestHTTPServer { request in
            let q = request.query
            guard q["module"] == "account", q["action"] == "txlist", q["page"] == "1", q["offset"] == "1",
                  q["apikey"] == "s3cret", q["chainid"] == "1", let address = q["address"] else {
                return .json("{\"status\":\"0\",\"message\":\"NOTOK\",\"result\":\"Error! Missing Or invalid Module name\"}")
            }
            if counter.bump("all") == 3 {
                return .json("{\"status\":\"0\",\"message\":\"NOTOK\",\"result\":\"Max rate limit reached, please use API Key for higher rate limit\"}")
            }
            if address == used { return .json("{\"status\":\"1\",\"message\":\"OK\",\"result\":[\(Self.tx)]}") }
            return .json("{\"status\":\"0\",\"message\":\"No transactions found\",\"result\":[]}")
        }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EtherscanUsageSource(baseURL: server.baseURL + "/v2/api", apiKeyVariable: "KEYHOST_TEST_ETHERSCAN", chainID: 1,
                                              environment: ["KEYHOST_TEST_ETHERSCAN": "s3cret"],
                                              http: HTTPOptions(maxConcurrentRequests: 1, timeout: 5, sleep: sleeps.sleep))
        let result = try DiscoveryEngine(scheme: try .ethereum(), keys: try TestWallet.keys(), usage: source,
                                         options: DiscoveryOptions(receiveGapLimit: 4)).run()
        #expect(result.usedAddresses.map(\.address) == [used])
        #expect(sleeps.delays == [0.5], "the rate-limited request was retried once")
        #expect(server.requests.count == result.totals.addressesChecked + 1)
        #expect(server.requests.allSatisfy { $0.path == "/v2/api" })
        #expect(!source.name.contains("s3cret"))
    }

    @Test("NOTOK errors name the address and never the key; a missing key variable is clear")
    func errors() throws {
        let server = try TestHTTPServer { request in
            if request.query["address"] == "0xbad" { return .json("{\"status\":\"0\",\"message\":\"NOTOK\",\"result\":\"Invalid API Key\"}") }
            if request.query["address"] == "0xodd" { return .json("{\"status\":\"1\",\"message\":\"OK\",\"result\":\"yes\"}") }
            return .json("{\"status\":\"0\",\"message\":\"NOTOK\",\"result\":\"Max rate limit reached\"}")
        }
        defer { server.stop() }
        let sleeps = SleepRecorder()
        let source = try EtherscanUsageSource(baseURL: server.baseURL, apiKeyVariable: "K", environment: ["K": "s3cret"],
                                              http: HTTPOptions(timeout: 120, maxRetries: 2, sleep: sleeps.sleep))
        let error = discoveryError { _ = try source.usage(of: ["0xbad"]) }
        guard case .serviceError(let url, let address, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(address == "0xbad" && detail == "NOTOK: Invalid API Key")
        #expect(!url.contains("s3cret") && !(error?.description.contains("s3cret") ?? true))
        #expect(sleeps.delays.isEmpty, "a bad key is not retried")
        let limited = discoveryError { _ = try source.usage(of: ["0xbusy"]) }
        #expect(limited?.description.contains("Max rate limit reached") == true)
        #expect(sleeps.delays == [0.5, 1.0])
        guard case .malformedResponse = discoveryError({ _ = try source.usage(of: ["0xodd"]) }) else { Issue.record("status 1 with a string"); return }
        #expect(discoveryError { _ = try EtherscanUsageSource(baseURL: server.baseURL, apiKeyVariable: "NOPE", environment: [:]) }
            == .missingAPIKey(variable: "NOPE"))
    }
}
