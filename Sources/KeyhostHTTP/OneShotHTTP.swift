// URL and Data from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request over keyhost's own transport (sockets, OpenSSL for https, proxies), no retries and no
/// kept connection (a ledger's deposit is not idempotent on the wire: it is never sent twice by the transport).
///
/// For callers outside discovery (the ledger client): Foundation's URLSession lives in
/// FoundationNetworking, which links libcurl and some thirty shared libraries that every keyhost
/// run would then load at start-up, whether it talks HTTP or not.
public enum OneShotHTTP {
    public struct Answer: Sendable {
        public let status: Int
        public let body: Data
    }

    /// A failure below HTTP (lookup, connect, TLS, timeout, malformed answer), worded for error messages.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `method url` with `body` (typed `contentType`) and reads the whole answer within `timeout` seconds.
    public static func send(_ method: String, _ url: URL, body: Data? = nil, contentType: String? = nil,
                            timeout: Double, proxies: ProxySettings = .direct) throws -> Answer {
        var headers = [("User-Agent", "keyhost"), ("Accept", "application/json")]
        if let contentType { headers.append(("Content-Type", contentType)) }
        do {
            let response = try HTTPTransport.send(url: url, method: method, headers: headers, body: body, timeout: timeout,
                                                  tls: { try TLSContext(caFile: nil) }, proxies: proxies)
            return Answer(status: response.status, body: response.body)
        } catch let error as HTTPTransportError {
            throw Failure(description: error.message)
        }
    }
}
