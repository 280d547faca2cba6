// URL and Data from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostRecord

/// Usage from any Ethereum JSON-RPC node: batched JSON-RPC 2.0 calls of `eth_getTransactionCount` and
/// `eth_getBalance` at `latest` for each address; used iff nonce > 0 or balance > 0.
///
/// The nonce catches addresses that sent; the balance catches addresses that only received (a receive does not
/// raise the nonce). An address that received and then had everything swept by a contract is missed by both,
/// as by any node-only check; an indexer source (Etherscan) sees it.
public final class EthereumRPCUsageSource: UsageSource, Sendable {
    public let url: URL
    /// Addresses per HTTP request (each address is two calls in the batch).
    public let addressesPerRequest: Int
    private let client: HTTPClient

    public init(url: String, addressesPerRequest: Int = 50, http: HTTPOptions = HTTPOptions()) throws {
        self.url = try parseBaseURL(url, what: "JSON-RPC")
        guard addressesPerRequest >= 1 else {
            throw DiscoveryError.invalidOption(name: "addresses per request", detail: "\(addressesPerRequest); it must be at least 1")
        }
        self.addressesPerRequest = addressesPerRequest
        client = try HTTPClient(options: http)
    }

    public var name: String { "ethereum-rpc \(url.absoluteString)" }

    public func usage(of addresses: [String]) throws -> [Bool] {
        let chunks = stride(from: 0, to: addresses.count, by: addressesPerRequest).map {
            Array(addresses[$0..<min($0 + addressesPerRequest, addresses.count)])
        }
        return try client.map(chunks) { [self] chunk in try self.check(chunk) }.flatMap { $0 }
    }

    private static let methods = ["eth_getTransactionCount", "eth_getBalance"]

    private func check(_ addresses: [String]) throws -> [Bool] {
        // Ids: 2i for the nonce of address i, 2i+1 for its balance; answers may come in any order.
        var calls = [JSONValue]()
        for (i, address) in addresses.enumerated() {
            for (m, method) in Self.methods.enumerated() {
                calls.append(.object([.init("jsonrpc", .string("2.0")), .init("id", .number(String(2 * i + m))), .init("method", .string(method)),
                                      .init("params", .array([.string(address), .string("latest")]))]))
            }
        }
        let body = Data(JSONValue.array(calls).rendered.utf8)
        let display = url.absoluteString
        let subject = addresses.count == 1 ? addresses[0] : "\(addresses[0]) and \(addresses.count - 1) more"
        let request = HTTPRequest(url: url, method: "POST", body: body, contentType: "application/json", displayURL: display, subject: subject)
        return try client.fetch(request) { response in
            let json = try parseJSON(response, url: display, address: subject)
            guard let items = json.arrayValue else {
                // Nodes without batch support, or rate limiting the whole batch, answer one error object.
                if case .object = json, let error = json["error"] {
                    let detail = Self.describe(error)
                    if Self.isRateLimit(error) { throw RetryableFailure(detail: detail) }
                    throw DiscoveryError.serviceError(url: display, address: subject, detail: "the batch was refused: \(detail)")
                }
                throw DiscoveryError.malformedResponse(url: display, address: subject, detail: "expected a JSON-RPC batch (array), got \(response.snippet)")
            }
            var byID = [Int: JSONValue]()
            for item in items {
                guard case .object = item, let id = Self.intID(item["id"]) else {
                    throw DiscoveryError.malformedResponse(url: display, address: subject, detail: "a batch item has no numeric id: \(item.plainText)")
                }
                byID[id] = item
            }
            var flags = [Bool]()
            for (i, address) in addresses.enumerated() {
                var used = false
                for (m, method) in Self.methods.enumerated() {
                    guard let object = byID[2 * i + m] else {
                        throw DiscoveryError.malformedResponse(url: display, address: address, detail: "no answer to \(method) (id \(2 * i + m))")
                    }
                    if let error = object["error"], error != .null {
                        if Self.isRateLimit(error) { throw RetryableFailure(detail: "\(method): \(Self.describe(error))") }
                        throw DiscoveryError.serviceError(url: display, address: address, detail: "\(method): \(Self.describe(error))")
                    }
                    guard let result = object["result"]?.stringValue, let nonZero = Self.isNonZeroQuantity(result) else {
                        throw DiscoveryError.malformedResponse(url: display, address: address,
                                                               detail: "\(method) result is not a hex quantity: \(object["result"]?.plainText ?? "missing")")
                    }
                    used = used || nonZero
                }
                flags.append(used)
            }
            return flags
        }
    }

    static func intID(_ value: JSONValue?) -> Int? {
        if let number = value?.integerValue { return number }
        if let text = value?.stringValue { return Int(text) }
        return nil
    }

    /// Whether a JSON-RPC QUANTITY ("0x0", "0x1bc16d674ec80000") is non-zero; nil if it is not one.
    static func isNonZeroQuantity(_ text: String) -> Bool? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = text.dropFirst(2)
        guard !digits.isEmpty, digits.allSatisfy(\.isHexDigit) else { return nil }
        return digits.contains { $0 != "0" }
    }

    static func describe(_ error: JSONValue) -> String {
        guard case .object = error else { return error.plainText }
        let code = error["code"]?.integerValue.map { "\($0) " } ?? ""
        return code + (error["message"]?.stringValue ?? error.rendered)
    }

    /// -32005 is the de-facto "limit exceeded" code (EIP-1474); providers also say it in words.
    static func isRateLimit(_ error: JSONValue) -> Bool {
        if error["code"]?.integerValue == -32005 { return true }
        let message = (error["message"]?.stringValue ?? error.plainText).lowercased()
        return message.contains("rate limit") || message.contains("too many requests") || message.contains("limit exceeded")
    }
}
