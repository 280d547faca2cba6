// URL from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostRecord

/// Usage from an Esplora REST API (Blockstream's and mempool.space's explorers, or your own electrs/esplora):
/// `GET {base}/address/{address}` is used iff `chain_stats.tx_count + mempool_stats.tx_count > 0`.
/// Counting the mempool matters: an address just handed out and paid is used even before it confirms.
public final class EsploraUsageSource: UsageSource, Sendable {
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
        let escaped = percentEncodedPathSegment(address)
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let text = "\(base)/address/\(escaped)"
        guard let url = URL(string: text) else {
            throw DiscoveryError.invalidOption(name: "Esplora URL", detail: "\(text) is not a URL")
        }
        let request = HTTPRequest(url: url, displayURL: text, subject: address)
        return try client.fetch(request) { response in
            let json = try parseJSON(response, url: text, address: address)
            func count(_ key: String) throws -> Int {
                guard case .object = json else {
                    throw DiscoveryError.malformedResponse(url: text, address: address, detail: "expected a JSON object, got \(response.snippet)")
                }
                guard case .object = json[key], let n = json[key]?["tx_count"]?.integerValue, n >= 0 else {
                    throw DiscoveryError.malformedResponse(url: text, address: address,
                                                           detail: "no \(key).tx_count (a non-negative integer) in \(response.snippet)")
                }
                return n
            }
            return try count("chain_stats") + count("mempool_stats") > 0
        }
    }
}

/// `text` percent-encoded for one URL path segment: what Foundation's `.urlPathAllowed` keeps (not ";"), less "/".
func percentEncodedPathSegment(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out = [UInt8]()
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            out.append(byte)
        case _ where Array("-._~!$&'()*+,=:@".utf8).contains(byte):
            out.append(byte)
        default:
            out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}
