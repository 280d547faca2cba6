import Foundation

/// Usage from an Esplora REST API (Blockstream's and mempool.space's explorers, or your own electrs/esplora):
/// `GET {base}/address/{address}` is used iff `chain_stats.tx_count + mempool_stats.tx_count > 0`.
/// Counting the mempool matters: an address just handed out and paid is used even before it confirms.
public final class EsploraUsageSource: UsageSource {
    public let baseURL: URL
    private let client: HTTPClient

    /// `baseURL` is the API root, e.g. https://blockstream.info/api or http://127.0.0.1:3002.
    public init(baseURL: String, http: HTTPOptions = HTTPOptions()) throws {
        self.baseURL = try parseBaseURL(baseURL, what: "Esplora")
        client = try HTTPClient(options: http)
    }

    public var name: String { "esplora \(baseURL.absoluteString)" }

    public func usage(of addresses: [String]) throws -> [Bool] {
        try client.map(addresses) { [self] address in try self.check(address) }
    }

    private func check(_ address: String) throws -> Bool {
        let escaped = address.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? address
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let text = "\(base)/address/\(escaped)"
        guard let url = URL(string: text) else {
            throw DiscoveryError.invalidOption(name: "Esplora URL", detail: "\(text) is not a URL")
        }
        let request = HTTPRequest(url: url, displayURL: text, subject: address)
        return try client.fetch(request) { response in
            let json = try parseJSON(response, url: text, address: address)
            func count(_ key: String) throws -> Int {
                guard let object = json as? [String: Any] else {
                    throw DiscoveryError.malformedResponse(url: text, address: address, detail: "expected a JSON object, got \(response.snippet)")
                }
                guard let stats = object[key] as? [String: Any], let n = stats["tx_count"] as? NSNumber,
                      n.doubleValue >= 0, n.doubleValue == n.doubleValue.rounded() else {
                    throw DiscoveryError.malformedResponse(url: text, address: address,
                                                           detail: "no \(key).tx_count (a non-negative integer) in \(response.snippet)")
                }
                return n.intValue
            }
            return try count("chain_stats") + count("mempool_stats") > 0
        }
    }
}
