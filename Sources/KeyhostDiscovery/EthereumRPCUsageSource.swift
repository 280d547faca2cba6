import Foundation

/// Usage from any Ethereum JSON-RPC node: batched JSON-RPC 2.0 calls of `eth_getTransactionCount` and
/// `eth_getBalance` at `latest` for each address; used iff nonce > 0 or balance > 0.
///
/// The nonce catches addresses that sent; the balance catches addresses that only received (a receive does not
/// raise the nonce). An address that received and then had everything swept by a contract is missed by both,
/// as by any node-only check; an indexer source (Etherscan) sees it.
public final class EthereumRPCUsageSource: UsageSource {
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
        var calls = [[String: Any]]()
        for (i, address) in addresses.enumerated() {
            for (m, method) in Self.methods.enumerated() {
                calls.append(["jsonrpc": "2.0", "id": 2 * i + m, "method": method, "params": [address, "latest"]])
            }
        }
        let body = try JSONSerialization.data(withJSONObject: calls)
        let display = url.absoluteString
        let subject = addresses.count == 1 ? addresses[0] : "\(addresses[0]) and \(addresses.count - 1) more"
        let request = HTTPRequest(url: url, method: "POST", body: body, contentType: "application/json", displayURL: display, subject: subject)
        return try client.fetch(request) { response in
            let json = try parseJSON(response, url: display, address: subject)
            guard let items = json as? [Any] else {
                // Nodes without batch support, or rate limiting the whole batch, answer one error object.
                if let object = json as? [String: Any], let error = object["error"] {
                    let detail = Self.describe(error)
                    if Self.isRateLimit(error) { throw RetryableFailure(detail: detail) }
                    throw DiscoveryError.serviceError(url: display, address: subject, detail: "the batch was refused: \(detail)")
                }
                throw DiscoveryError.malformedResponse(url: display, address: subject, detail: "expected a JSON-RPC batch (array), got \(response.snippet)")
            }
            var byID = [Int: [String: Any]]()
            for item in items {
                guard let object = item as? [String: Any], let id = Self.intID(object["id"]) else {
                    throw DiscoveryError.malformedResponse(url: display, address: subject, detail: "a batch item has no numeric id: \(item)")
                }
                byID[id] = object
            }
            var flags = [Bool]()
            for (i, address) in addresses.enumerated() {
                var used = false
                for (m, method) in Self.methods.enumerated() {
                    guard let object = byID[2 * i + m] else {
                        throw DiscoveryError.malformedResponse(url: display, address: address, detail: "no answer to \(method) (id \(2 * i + m))")
                    }
                    if let error = object["error"], !(error is NSNull) {
                        if Self.isRateLimit(error) { throw RetryableFailure(detail: "\(method): \(Self.describe(error))") }
                        throw DiscoveryError.serviceError(url: display, address: address, detail: "\(method): \(Self.describe(error))")
                    }
                    guard let result = object["result"] as? String, let nonZero = Self.isNonZeroQuantity(result) else {
                        throw DiscoveryError.malformedResponse(url: display, address: address,
                                                               detail: "\(method) result is not a hex quantity: \(object["result"] ?? "missing")")
                    }
                    used = used || nonZero
                }
                flags.append(used)
            }
            return flags
        }
    }

    static func intID(_ value: Any?) -> Int? {
        if let number = value as? NSNumber { return number.intValue }
        if let text = value as? String { return Int(text) }
        return nil
    }

    /// Whether a JSON-RPC QUANTITY ("0x0", "0x1bc16d674ec80000") is non-zero; nil if it is not one.
    static func isNonZeroQuantity(_ text: String) -> Bool? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = text.dropFirst(2)
        guard !digits.isEmpty, digits.allSatisfy(\.isHexDigit) else { return nil }
        return digits.contains { $0 != "0" }
    }

    static func describe(_ error: Any) -> String {
        guard let object = error as? [String: Any] else { return "\(error)" }
        let code = (object["code"] as? NSNumber).map { "\($0.intValue) " } ?? ""
        return code + ((object["message"] as? String) ?? "\(object)")
    }

    /// -32005 is the de-facto "limit exceeded" code (EIP-1474); providers also say it in words.
    static func isRateLimit(_ error: Any) -> Bool {
        let object = error as? [String: Any]
        if (object?["code"] as? NSNumber)?.intValue == -32005 { return true }
        let message = ((object?["message"] as? String) ?? "\(error)").lowercased()
        return message.contains("rate limit") || message.contains("too many requests") || message.contains("limit exceeded")
    }
}
