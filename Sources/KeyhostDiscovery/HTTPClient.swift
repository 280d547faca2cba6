// URL, Data and Date from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord
import KeyhostHTTP
#if canImport(Glibc)
import Glibc
#endif

/// HTTP behaviour shared by the remote usage sources.
public struct HTTPOptions: Sendable {
    /// Requests in flight at once (public services ban clients that flood them).
    public var maxConcurrentRequests: Int = 4
    /// Seconds before a request with no answer counts as failed.
    public var timeout: Double = 30
    /// Retries after the first attempt, on 429, 5xx, timeouts, refused connections and service rate limits.
    public var maxRetries: Int = 5
    /// First backoff in seconds; doubled on each retry.
    public var initialBackoff: Double = 0.5
    /// Longest wait between two attempts, also capping a server's Retry-After.
    public var maxBackoff: Double = 60
    /// Sent as User-Agent.
    public var userAgent: String = "keyhost-discovery"
    /// A PEM file of extra certificate authorities trusted for https, besides the system's.
    public var caFile: String?
    /// Which proxy each connection goes through (none by default; the front ends read `--proxy` and the
    /// environment into this).
    public var proxy: ProxySettings = .direct
    /// Whether a connection is kept for the next request to the same server (HTTP/1.1 keep-alive).
    public var keepAlive = true
    /// Spaces requests (every attempt, and each Electrum message) over everything that shares it: a job's wallets.
    public var rateLimiter: RateLimiter?
    /// How to wait before a retry; tests record the delays instead of sleeping.
    public var sleep: @Sendable (Double) -> Void = { sleepSeconds($0) }

    public init(maxConcurrentRequests: Int = 4, timeout: Double = 30, maxRetries: Int = 5, initialBackoff: Double = 0.5,
                maxBackoff: Double = 60, sleep: (@Sendable (Double) -> Void)? = nil) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.timeout = timeout
        self.maxRetries = maxRetries
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        if let sleep { self.sleep = sleep }
    }

    /// Seconds to wait after failed attempt number `attempt` (0 for the first): the first backoff, doubled per
    /// attempt, at most `maxBackoff`.
    func backoff(afterAttempt attempt: Int) -> Double {
        min(initialBackoff * pow(2, Double(min(attempt, 62))), maxBackoff)
    }

    func validate() throws {
        guard maxConcurrentRequests >= 1 else {
            throw DiscoveryError.invalidOption(name: "parallel requests", detail: "\(maxConcurrentRequests); it must be at least 1")
        }
        guard timeout > 0 else { throw DiscoveryError.invalidOption(name: "timeout", detail: "\(timeout); it must be positive") }
        guard maxRetries >= 0 else { throw DiscoveryError.invalidOption(name: "retries", detail: "\(maxRetries); it must not be negative") }
    }
}

/// One request, with what error messages should name: the URL without secrets and the address asked about.
struct HTTPRequest {
    var url: URL
    var method = "GET"
    var body: Data?
    var contentType: String?
    /// The URL as errors show it (an API key is removed).
    var displayURL: String
    /// The address (or addresses) the request is about.
    var subject: String
}

/// A parser's way to ask for another attempt (a rate limit reported inside a 200 answer).
struct RetryableFailure: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}

/// Blocking HTTP over `HTTPTransport` (sockets, OpenSSL for https) with bounded parallelism, timeouts and retries with exponential backoff that
/// honour Retry-After. Blocking, because the engine (and the Lua layer above it) is synchronous.
final class HTTPClient: Sendable {
    let options: HTTPOptions
    /// The TLS configuration, made on the first https request (loading the trust store costs a few ms).
    private let tlsContext = Mutex<TLSContext?>(nil)
    /// Connections kept between requests, at most one per request in flight.
    let pool: HTTPConnectionPool?
    /// Requests in flight over everyone using this client (a job's wallets share one), so that connections too
    /// stay within `maxConcurrentRequests`.
    private let inFlight: DispatchSemaphore

    init(options: HTTPOptions) throws {
        try options.validate()
        self.options = options
        pool = options.keepAlive ? HTTPConnectionPool(maxIdlePerOrigin: options.maxConcurrentRequests) : nil
        inFlight = DispatchSemaphore(value: options.maxConcurrentRequests)
    }

    private func tls() throws -> TLSContext {
        try tlsContext.withLock { tlsContext in
            if let tlsContext { return tlsContext }
            let context = try TLSContext(caFile: options.caFile)
            tlsContext = context
            return context
        }
    }

    /// Sends `request`, retrying on 429, 5xx, transport failures and `RetryableFailure` from `parse`;
    /// any other status is an error, and so is anything `parse` rejects.
    func fetch<T>(_ request: HTTPRequest, parse: (HTTPResponse) throws -> T) throws -> T {
        var attempt = 0
        while true {
            let outcome = send(request)
            var retryDelay: Double?
            var finalError: DiscoveryError
            switch outcome {
            case .failure(let error):
                finalError = .unreachable(url: request.displayURL, address: request.subject, detail: Self.describe(error))
            case .success(let response) where response.status == 429 || (500...599).contains(response.status):
                retryDelay = response.header("Retry-After").flatMap { Self.retryAfter($0, now: Date()) }
                finalError = .httpStatus(url: request.displayURL, address: request.subject, status: response.status, body: response.snippet)
            case .success(let response) where !(200...299).contains(response.status):
                throw DiscoveryError.httpStatus(url: request.displayURL, address: request.subject, status: response.status, body: response.snippet)
            case .success(let response):
                do {
                    return try parse(response)
                } catch let retry as RetryableFailure {
                    finalError = .serviceError(url: request.displayURL, address: request.subject, detail: retry.detail)
                }
            }
            guard attempt < options.maxRetries else {
                throw finalError
            }
            options.sleep(min(retryDelay ?? options.backoff(afterAttempt: attempt), options.maxBackoff))
            attempt += 1
        }
    }

    /// `body` over `items`, at most `maxConcurrentRequests` at a time, results in order (see `parallelMap`).
    func map<T: Sendable, R: Sendable>(_ items: [T], _ body: @escaping @Sendable (T) throws -> R) throws -> [R] {
        try parallelMap(items, width: options.maxConcurrentRequests, body)
    }

    private func send(_ request: HTTPRequest) -> Result<HTTPResponse, Error> {
        var headers = [("User-Agent", options.userAgent), ("Accept", "application/json")]
        if let contentType = request.contentType { headers.append(("Content-Type", contentType)) }
        inFlight.wait()
        defer { inFlight.signal() }
        options.rateLimiter?.wait()
        return Result {
            try HTTPTransport.send(url: request.url, method: request.method, headers: headers, body: request.body,
                                   timeout: options.timeout, tls: tls, proxies: options.proxy, pool: pool)
        }
    }

    private static func describe(_ error: Error) -> String {
        if let transportError = error as? HTTPTransportError { return transportError.message }
        return "\(error)"
    }

    /// Seconds to wait from a Retry-After value: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
    static func retryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingWhitespace()
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        guard let time = HTTPDate.parse(trimmed) else { return nil }
        return max(0, Date(timeIntervalSince1970: Double(time)).timeIntervalSince(now))
    }
}

/// A base URL given by the user: http or https, with a host.
func parseBaseURL(_ text: String, what: String) throws -> URL {
    let trimmed = text.trimmingWhitespaceAndNewlines()
    guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
          url.host != nil else {
        throw DiscoveryError.invalidOption(name: "\(what) URL", detail: "\"\(text)\" is not an http:// or https:// URL")
    }
    return url
}

/// Parses a JSON body or says what is wrong with it.
func parseJSON(_ response: HTTPResponse, url: String, address: String) throws -> JSONValue {
    do {
        // The transport already bounds the body; JSONValue's own default (1 MiB) would refuse large batches.
        return try JSONValue.parse(Array(response.body), maxBytes: HTTPTransport.maxBodySize)
    } catch {
        throw DiscoveryError.malformedResponse(url: url, address: address, detail: "not JSON: \(response.snippet.isEmpty ? "(empty body)" : response.snippet)")
    }
}
