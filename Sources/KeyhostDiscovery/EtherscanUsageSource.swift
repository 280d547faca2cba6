// URL, URLComponents and ProcessInfo from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Usage from an Etherscan-compatible API (Etherscan and its clones for other EVM chains, Blockscout's
/// compatibility API): `?module=account&action=txlist&address=…&page=1&offset=1&apikey=…`.
///
/// Used iff the address has at least one normal transaction. "No transactions found" is unused; NOTOK with a
/// rate-limit message is retried with backoff; any other NOTOK (a bad key, a bad address) is an error.
/// The API key comes from an environment variable so it never lands in shell history, and never in messages.
public final class EtherscanUsageSource: UsageSource, Sendable {
    public let baseURL: URL
    private let apiKey: String
    private let chainID: String?
    private let client: HTTPClient

    /// - Parameters:
    ///   - baseURL: the API endpoint, e.g. https://api.etherscan.io/v2/api.
    ///   - apiKeyVariable: the name of the environment variable holding the key.
    ///   - chainID: sent as `chainid` (Etherscan's multichain v2 API) when given.
    public init(baseURL: String, apiKeyVariable: String, chainID: Int? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment, http: HTTPOptions = HTTPOptions()) throws {
        self.baseURL = try parseBaseURL(baseURL, what: "Etherscan")
        guard let key = environment[apiKeyVariable], !key.isEmpty else { throw DiscoveryError.missingAPIKey(variable: apiKeyVariable) }
        apiKey = key
        self.chainID = chainID.map(String.init)
        client = try HTTPClient(options: http)
    }

    public var name: String { "etherscan \(baseURL.absoluteString)" + (chainID.map { " chain \($0)" } ?? "") }

    public func usage(of addresses: [String]) throws -> [Bool] {
        try client.map(addresses) { [self] address in try self.check(address) }
    }

    private func check(_ address: String) throws -> Bool {
        func url(withKey: Bool) -> URL? {
            var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
            var query = components?.queryItems ?? []
            if let chainID { query.append(URLQueryItem(name: "chainid", value: chainID)) }
            query += [URLQueryItem(name: "module", value: "account"), URLQueryItem(name: "action", value: "txlist"),
                      URLQueryItem(name: "address", value: address), URLQueryItem(name: "page", value: "1"),
                      URLQueryItem(name: "offset", value: "1"), URLQueryItem(name: "sort", value: "asc")]
            if withKey { query.append(URLQueryItem(name: "apikey", value: apiKey)) }
            components?.queryItems = query
            return components?.url
        }
        guard let requestURL = url(withKey: true) else {
            throw DiscoveryError.invalidOption(name: "Etherscan URL", detail: "cannot build a query for \(address)")
        }
        let display = (url(withKey: false)?.absoluteString ?? baseURL.absoluteString) + "&apikey=…"
        let request = HTTPRequest(url: requestURL, displayURL: display, subject: address)
        return try client.fetch(request) { response in
            let json = try parseJSON(response, url: display, address: address)
            guard case .object = json, let status = json["status"]?.stringValue else {
                throw DiscoveryError.malformedResponse(url: display, address: address, detail: "expected an object with a \"status\", got \(response.snippet)")
            }
            let message = json["message"]?.stringValue ?? ""
            let result = json["result"]
            if status == "1" {
                guard let list = result?.arrayValue else {
                    throw DiscoveryError.malformedResponse(url: display, address: address, detail: "status 1 without a result list: \(response.snippet)")
                }
                return !list.isEmpty
            }
            guard status == "0" else {
                throw DiscoveryError.malformedResponse(url: display, address: address, detail: "unknown status \"\(status)\"")
            }
            if message.lowercased().hasPrefix("no transactions found"), result?.arrayValue?.isEmpty ?? true { return false }
            let detail = [message, result?.stringValue ?? ""].filter { !$0.isEmpty }.joined(separator: ": ")
            let lower = detail.lowercased()
            if lower.contains("rate limit") || lower.contains("too many") || lower.contains("max calls per sec") {
                throw RetryableFailure(detail: detail)
            }
            throw DiscoveryError.serviceError(url: display, address: address, detail: detail.isEmpty ? "status 0 without a message" : detail)
        }
    }
}
