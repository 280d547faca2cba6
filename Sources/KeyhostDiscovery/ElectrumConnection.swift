import KeyhostCrypto
import KeyhostHTTP
import KeyhostRecord

/// One JSON-RPC call of the Electrum protocol.
struct ElectrumCall {
    var method: String
    var params: [JSONValue]
}

/// What a call got back: its result, or the server's error object.
enum ElectrumOutcome: Equatable {
    case result(JSONValue)
    case error(JSONValue)
}

/// One session with an Electrum server: newline-delimited JSON-RPC 2.0 over TCP or TLS, opened with
/// `server.version` (the protocol requires it first). Not thread-safe: the pool lends it to one thread at a time.
///
/// Every input is hostile: a line longer than the cap is refused as soon as that many bytes arrive, every
/// message must be JSON of the shape the protocol promises, and answers are matched to calls by id (in any
/// order); notifications the server pushes meanwhile (`server.ping` from newer ElectrumX) are skipped, and
/// do not extend the exchange's deadline.
final class ElectrumConnection {
    /// The protocol version asked for: 1.4 is what electrs, Fulcrum and ElectrumX all speak, and the last one in
    /// which `blockchain.scripthash.get_history` returns a plain list.
    static let protocolVersion = "1.4"
    static let historyMethod = "blockchain.scripthash.get_history"

    private let stream: SocketStream
    private let timeout: Double
    private let maxLineLength: Int
    private let rateLimiter: RateLimiter?
    private var nextID = 0
    /// The server's software and the protocol version it chose, from `server.version`.
    private(set) var serverSoftware = ""
    private(set) var negotiatedVersion = ""
    /// Monotonic nanoseconds of the last exchange, for the keep-alive.
    private(set) var lastUsed: UInt64 = 0
    /// Request messages sent (a batch counts once): the round trips.
    private(set) var requestsSent = 0

    /// Connects (through `proxy` when given), handshakes TLS when `tls` is given, and negotiates the protocol version.
    init(server: ElectrumServer, tls: TLSContext?, proxy: Proxy?, timeout: Double, clientName: String, maxLineLength: Int,
         rateLimiter: RateLimiter?) throws {
        self.rateLimiter = rateLimiter
        do {
            stream = try SocketStream.connect(host: server.host, port: server.port, tls: tls, timeout: timeout, proxy: proxy)
        } catch let error as HTTPTransportError {
            throw ElectrumFailure.transport(error)
        }
        self.timeout = timeout
        self.maxLineLength = maxLineLength
        try negotiate(clientName: clientName)
    }

    func close() { stream.close() }

    /// Whether the server hung up while the connection sat idle.
    var isClosed: Bool { stream.peerHasClosed() }

    private func negotiate(clientName: String) throws {
        let outcome = try pipelined([ElectrumCall(method: "server.version",
                                                  params: [.string(clientName), .string(Self.protocolVersion)])])[0]
        switch outcome {
        case .error(let error):
            throw ElectrumFailure(kind: .refused, detail: "it refused protocol \(Self.protocolVersion) in server.version (\(Self.describe(error))); "
                + "keyhost speaks the Electrum protocol \(Self.protocolVersion)", retryable: false)
        case .result(let result):
            guard let pair = result.arrayValue, pair.count == 2, let software = pair[0].stringValue, let version = pair[1].stringValue else {
                // Servers before protocol 1.1 answered a bare version string.
                let old = result.stringValue.map { " (\"\(ElectrumText.shown($0))\": a server older than protocol 1.1)" } ?? ""
                throw ElectrumFailure.malformed("server.version answered \(ElectrumText.shown(result.rendered, limit: 120))\(old), "
                    + "not [server_software, protocol_version]; keyhost needs protocol \(Self.protocolVersion) or later")
            }
            guard let number = ElectrumVersion(version) else {
                throw ElectrumFailure.malformed("server.version answered protocol \"\(ElectrumText.shown(version))\", not a version like 1.4")
            }
            guard number >= ElectrumVersion(Self.protocolVersion)! else {
                throw ElectrumFailure(kind: .refused, detail: "it speaks the Electrum protocol \(ElectrumText.shown(version)) "
                    + "(\(ElectrumText.shown(software))); keyhost needs \(Self.protocolVersion) or later: upgrade the server", retryable: false)
            }
            serverSoftware = software
            negotiatedVersion = version
        }
    }

    /// The answer to a batch: each call's outcome in order, or the one error object a server that refuses
    /// batches (Fulcrum with max_batch = 0, or over its per-IP limit) answers instead.
    enum BatchAnswer {
        case answered([ElectrumOutcome])
        case refused(JSONValue)
    }

    /// Sends `calls` as one JSON array: one message, one round trip.
    func batch(_ calls: [ElectrumCall]) throws -> BatchAnswer {
        let ids = try send(calls, asBatch: true)
        let message: JSONValue
        do {
            message = try readAnswer()
        } catch var failure as ElectrumFailure where failure.kind == .unreachable {
            failure.closedOnBatch = true
            throw failure
        }
        guard let items = message.arrayValue else {
            if case .object = message, let error = message["error"], error != .null { return .refused(error) }
            throw ElectrumFailure.malformed("a batch of \(calls.count) calls was answered with \(message.kindName), not an array: "
                + ElectrumText.shown(message.rendered, limit: 200))
        }
        var answers = [Int: ElectrumOutcome]()
        for item in items {
            let (id, outcome) = try Self.response(item)
            guard ids.contains(id) else { throw ElectrumFailure.malformed("the batch answer holds id \(id), which was not asked") }
            guard answers.updateValue(outcome, forKey: id) == nil else {
                throw ElectrumFailure.malformed("the batch answer holds id \(id) twice")
            }
        }
        return .answered(try ids.map { id in
            guard let outcome = answers[id] else {
                throw ElectrumFailure.malformed("the batch answer has \(items.count) of \(calls.count) answers; none for id \(id)")
            }
            return outcome
        })
    }

    /// Sends `calls` as separate messages, all written at once (pipelined), and matches the answers by id in
    /// whatever order they come.
    func pipelined(_ calls: [ElectrumCall]) throws -> [ElectrumOutcome] {
        let ids = try send(calls, asBatch: false)
        var answers = [Int: ElectrumOutcome]()
        while answers.count < ids.count {
            let message = try readAnswer()
            guard case .object = message else {
                throw ElectrumFailure.malformed("a single call was answered with \(message.kindName): " + ElectrumText.shown(message.rendered, limit: 200))
            }
            if message["id"] == nil || message["id"] == .null, let error = message["error"], error != .null {
                // An error the server could not tie to a request (a message it could not parse).
                throw ElectrumFailure(kind: .refused, detail: "it answered with an error for no request: \(Self.describe(error))", retryable: false)
            }
            let (id, outcome) = try Self.response(message)
            guard ids.contains(id), answers[id] == nil else {
                throw ElectrumFailure.malformed("an answer has id \(id), which was not asked or was answered already")
            }
            answers[id] = outcome
        }
        return ids.map { answers[$0]! }
    }

    /// Writes `calls` (one array, or one line each) and returns their ids. The deadline covers the whole exchange.
    private func send(_ calls: [ElectrumCall], asBatch: Bool) throws -> [Int] {
        // Each message counts against the rate (a batch is one message, as a server counts them).
        if let rateLimiter { for _ in 0..<(asBatch ? 1 : calls.count) { rateLimiter.wait() } }
        stream.setTimeout(timeout)
        var ids = [Int]()
        var objects = [String]()
        for call in calls {
            let id = nextID
            nextID += 1
            ids.append(id)
            objects.append(JSONValue.object([.init("jsonrpc", .string("2.0")), .init("id", .number(String(id))),
                                             .init("method", .string(call.method)), .init("params", .array(call.params))]).rendered)
        }
        let text = asBatch ? "[" + objects.joined(separator: ",") + "]\n" : objects.map { $0 + "\n" }.joined()
        do {
            try stream.write(Array(text.utf8))
        } catch let error as HTTPTransportError {
            throw ElectrumFailure.transport(error)
        }
        requestsSent += asBatch ? 1 : calls.count
        lastUsed = monotonicClock()
        return ids
    }

    /// The next message that is not a notification, by the exchange's deadline: notifications do not move it.
    private func readAnswer() throws -> JSONValue {
        var skipped = 0
        while true {
            let line: [UInt8]
            do {
                line = try stream.readLine(limit: maxLineLength)
            } catch let error as HTTPTransportError where error.kind == .timedOut && skipped > 0 {
                throw ElectrumFailure(kind: .unreachable, detail: "timed out: no answer within \(Self.seconds(timeout)), only "
                    + "\(skipped) notification\(skipped == 1 ? "" : "s") (which do not extend the deadline)", retryable: true)
            } catch let error as HTTPTransportError {
                throw ElectrumFailure.transport(error)
            }
            lastUsed = monotonicClock()
            if line.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }  // a blank line says nothing
            let message: JSONValue
            do {
                message = try JSONValue.parse(line, maxBytes: maxLineLength)
            } catch {
                throw ElectrumFailure.malformed("not JSON (\(error)): " + ElectrumText.shown(String(decoding: line.prefix(200), as: UTF8.self)))
            }
            // A notification has a method and no id; answers never carry a method.
            if case .object = message, message["method"] != nil, message["id"] == nil || message["id"] == .null {
                skipped += 1
                continue
            }
            return message
        }
    }

    /// "30 s" or "0.5 s", for the deadline in messages.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }

    /// The id and outcome of one response object.
    private static func response(_ item: JSONValue) throws -> (Int, ElectrumOutcome) {
        guard case .object = item else {
            throw ElectrumFailure.malformed("an answer is \(item.kindName), not a JSON-RPC response object")
        }
        guard let id = item["id"]?.integerValue else {
            throw ElectrumFailure.malformed("an answer has no numeric id: " + ElectrumText.shown(item.rendered, limit: 200))
        }
        if let error = item["error"], error != .null { return (id, .error(error)) }
        guard let result = item["result"] else {
            throw ElectrumFailure.malformed("the answer to id \(id) has neither result nor error")
        }
        return (id, .result(result))
    }

    /// "error 1: unknown method" for an error object (code and message, as the protocol's errors carry them).
    static func describe(_ error: JSONValue) -> String {
        guard case .object = error else { return "error " + ElectrumText.shown(error.rendered, limit: 200) }
        let code = error["code"]?.integerValue.map { "error \($0)" } ?? "error"
        let message = error["message"]?.stringValue ?? error.rendered
        return code + ": " + ElectrumText.shown(message, limit: 200)
    }
}
