import KeyhostCrypto
import KeyhostFiles
import KeyhostHTTP
import KeyhostRecord

/// Usage from an Electrum server (electrs, Fulcrum, ElectrumX; the servers Electrum, Sparrow and BDK use):
/// an address is used iff `blockchain.scripthash.get_history` of its output script lists any transaction,
/// confirmed or in the mempool. The script hash is SHA-256 of the output script, byte-reversed, in hex.
///
/// Talk: persistent connections, at most `parallel` of them, opened when first needed and kept open with
/// `server.ping` while idle. Each batch of addresses the engine asks about goes out as JSON-RPC batches (one
/// array, one round trip per connection used); a batch is split across connections only into requests of at
/// least `minimumPerRequest` addresses, and no request carries more than `maximumPerRequest`. A server that
/// answers a batch with one error object (it refuses batches) gets pipelined single requests on the same
/// connection from then on; so does one that twice in a row closes the connection on a batch before answering
/// (Blockstream's electrs closes on any JSON array). A broken connection is reopened and the request sent again,
/// with the same retries and backoff as the HTTP sources.
public final class ElectrumUsageSource: UsageSource, Sendable {
    public let server: ElectrumServer
    public let coin: Coin
    private let http: HTTPOptions
    private let options: ElectrumOptions
    private let pool: ElectrumPool

    /// `server` is `tcp://HOST:PORT` or `ssl://HOST:PORT`; `coin` says how addresses become output scripts.
    public init(server: String, coin: Coin, http: HTTPOptions = HTTPOptions(), electrum: ElectrumOptions = ElectrumOptions()) throws {
        try http.validate()
        try electrum.validate()
        self.server = try ElectrumServer(server)
        guard !coin.addressKinds.contains(.ethereum) else {
            throw DiscoveryError.invalidOption(name: "usage source", detail: "an Electrum server indexes output scripts of Bitcoin-like "
                + "chains; \(coin.name) has none: use eth-rpc:URL or etherscan")
        }
        let pinned = electrum.certificateFile != nil || electrum.fingerprint != nil
        guard self.server.useTLS || !pinned else {
            throw DiscoveryError.invalidOption(name: "Electrum certificate pin", detail: "a certificate or fingerprint pin needs an ssl:// server, "
                + "and \(self.server) is plain TCP: write electrum:ssl://\(self.server.host):PORT")
        }
        self.coin = coin
        self.http = http
        self.options = electrum
        var tls: TLSContext?
        if self.server.useTLS {
            var pins = TLSPins()
            if let file = electrum.certificateFile {
                let pem: [UInt8]
                do { pem = try BoundedFile.read(file, limit: BoundedFile.mebibyte) } catch {
                    throw DiscoveryError.invalidOption(name: "Electrum certificate file", detail: "\(error)")
                }
                pins.certificates = try TLSPins.certificates(pem: pem)
                guard !pins.certificates.isEmpty else {
                    throw DiscoveryError.invalidOption(name: "Electrum certificate file", detail: "\(file) holds no PEM certificate "
                        + "(-----BEGIN CERTIFICATE-----); give the server's certificate, e.g. Electrum's or Fulcrum's cert.pem")
                }
            }
            if let fingerprint = try electrum.fingerprintBytes() { pins.fingerprints = [fingerprint] }
            do { tls = try TLSContext(pins: pins) } catch let error as HTTPTransportError {
                throw DiscoveryError.invalidOption(name: "Electrum TLS set-up", detail: error.message)
            }
        }
        // Electrum is not HTTP: only a proxy for everything (--proxy, ALL_PROXY) carries it.
        pool = ElectrumPool(server: self.server, tls: tls, proxy: http.proxy.proxy(scheme: "electrum", host: self.server.host),
                            rateLimiter: http.rateLimiter,
                            size: http.maxConcurrentRequests, timeout: http.timeout,
                            clientName: electrum.clientName, maxLineLength: electrum.maxLineLength, keepAlive: electrum.keepAlive)
    }

    deinit { pool.shutDown() }

    public var name: String { "electrum \(server)" }

    /// Request messages sent so far (a batch counts once): the round trips.
    public var roundTrips: Int { pool.statistics.roundTrips }
    /// Connections attempted so far (reconnections included).
    public var connectionsOpened: Int { pool.statistics.connections }

    public func usage(of addresses: [String]) throws -> [Bool] {
        guard !addresses.isEmpty else { return [] }
        let hashes = try addresses.map(scriptHash)
        // As many requests as connections, each of at least minimumPerRequest and at most maximumPerRequest
        // addresses; more requests than connections take turns on them.
        let byConnections = min(pool.size, addresses.count / options.minimumPerRequest)
        let bySize = (addresses.count + options.maximumPerRequest - 1) / options.maximumPerRequest
        let requests = max(1, byConnections, bySize)
        let size = (addresses.count + requests - 1) / requests
        let chunks = stride(from: 0, to: addresses.count, by: size).enumerated().map { number, start in
            (slot: number % pool.size, range: start..<min(start + size, addresses.count))
        }
        return try parallelMap(chunks, width: min(chunks.count, pool.size)) { [self] chunk in
            try self.ask(Array(hashes[chunk.range]), Array(addresses[chunk.range]), slot: chunk.slot)
        }.flatMap { $0 }
    }

    /// The Electrum script hash of an address: SHA-256 of its output script, byte-reversed, hex.
    func scriptHash(_ address: String) throws -> String {
        let script: [UInt8]
        do { script = try Address.decode(address, coin: coin).scriptPubKey } catch {
            throw DiscoveryError.usageSourceFailed(source: name, underlying: "\(address) is not a \(coin.name) address, so it has no output script to ask about (\(error))")
        }
        return Hex.encode(Hash.sha256(script).reversed())
    }

    /// One request's addresses on one pooled connection, with reconnection, retries and backoff.
    private func ask(_ hashes: [String], _ addresses: [String], slot: Int) throws -> [Bool] {
        let subject = addresses.count == 1 ? addresses[0] : "\(addresses[0]) and \(addresses.count - 1) more"
        var attempt = 0
        while true {
            do {
                let outcomes = try pool.withConnection(slot) { connection in try self.histories(hashes, on: connection) }
                return try zip(outcomes, addresses).map { outcome, address in try Self.isUsed(outcome, address: address) }
            } catch let failure as ElectrumFailure {
                guard failure.retryable, attempt < http.maxRetries else { throw discoveryError(failure, subject: subject) }
            }
            http.sleep(http.backoff(afterAttempt: attempt))
            attempt += 1
        }
    }

    /// `get_history` of each hash: one batch, or pipelined singles once the server has refused batches.
    private func histories(_ hashes: [String], on connection: ElectrumConnection) throws -> [ElectrumOutcome] {
        let calls = hashes.map { ElectrumCall(method: ElectrumConnection.historyMethod, params: [.string($0)]) }
        if calls.count > 1 && !pool.batchesRefused {
            do {
                switch try connection.batch(calls) {
                case .answered(let outcomes):
                    pool.batchAnswered()
                    return outcomes
                case .refused:
                    pool.refuseBatches()
                }
            } catch let failure as ElectrumFailure where failure.closedOnBatch {
                pool.batchClosed()
                throw failure
            }
        }
        return try connection.pipelined(calls)
    }

    /// Whether a `get_history` answer lists any transaction. Protocol 1.4 answers a list of `{tx_hash, height}`
    /// (mempool entries add `fee`); 1.5 and later wrap it as `{history: [...]}`.
    static func isUsed(_ outcome: ElectrumOutcome, address: String) throws -> Bool {
        switch outcome {
        case .error(let error):
            // aiorpcx (ElectrumX) says -101 "excessive resource usage" and -102 "server busy": try again later.
            let code = error["code"]?.integerValue
            throw ElectrumFailure(kind: .refused, detail: "\(ElectrumConnection.historyMethod) for \(address): \(ElectrumConnection.describe(error))",
                                  retryable: code == -101 || code == -102)
        case .result(let result):
            guard let entries = result.arrayValue ?? result["history"]?.arrayValue else {
                throw ElectrumFailure.malformed("\(ElectrumConnection.historyMethod) for \(address) answered \(result.kindName), not a list of "
                    + "transactions: " + ElectrumText.shown(result.rendered, limit: 200))
            }
            for entry in entries {
                guard let hash = entry["tx_hash"]?.stringValue, hash.utf8.count == 64, hash.allSatisfy(\.isHexDigit),
                      entry["height"]?.integerValue != nil else {
                    throw ElectrumFailure.malformed("\(ElectrumConnection.historyMethod) for \(address) lists "
                        + ElectrumText.shown(entry.rendered, limit: 200) + ", not {tx_hash, height}")
                }
            }
            return !entries.isEmpty
        }
    }

    private func discoveryError(_ failure: ElectrumFailure, subject: String) -> DiscoveryError {
        switch failure.kind {
        case .unreachable:
            var detail = failure.detail
            if failure.certificateFingerprint != nil {
                detail += "; if that is your own server's certificate, pin that fingerprint with --electrum-fingerprint "
                    + "(electrum_fingerprint in Lua), or give its PEM file with --electrum-cert (electrum_cert)"
            }
            return .unreachable(url: name, address: subject, detail: detail)
        case .malformed:
            return .malformedResponse(url: name, address: subject, detail: failure.detail)
        case .refused:
            return .serviceError(url: name, address: subject, detail: failure.detail)
        }
    }
}
