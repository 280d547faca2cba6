import Hummingbird
import KeyhostLedger
import KeyhostRecord

/// A deposit refused for the verification it asks for, before any of it is done: 413
/// `too_much_work` over the per-request budget, 429 `rate_limited` over the client's rate.
struct WorkRefusal: Error {
    let response: Response

    static func check(_ work: DepositWork, client: String, rates: VerificationRates) throws {
        let limits = rates.limits
        if work.links > limits.linksPerRequest {
            let message = """
                the request asks the ledger to verify \(work.links) links (of \(work.chains) chains not deposited before), \
                more than the \(limits.linksPerRequest) one request may ask for; send fewer chains per request
                """
            throw WorkRefusal(response: jsonResponse(.contentTooLarge, body(kind: "too_much_work", message: message, work: work, limits: limits)))
        }
        if let wait = rates.take(work.links, for: client) {
            let message = """
                this client address has asked for more verification than its rate of \(limits.linksPerSecondPerClient) links a second \
                allows (this request: \(work.links) links); retry in \(wait) s
                """
            var response = jsonResponse(.tooManyRequests, body(kind: "rate_limited", message: message, work: work, limits: limits, retryAfter: wait))
            response.headers[.retryAfter] = String(wait)
            throw WorkRefusal(response: response)
        }
    }

    /// The error, with the figures for a client that splits its deposits itself.
    private static func body(kind: String, message: String, work: DepositWork, limits: VerificationLimits, retryAfter: Int? = nil) -> Record {
        var fields: [(String, Record)] = [
            ("kind", .string(kind)), ("message", .string(message)), ("links", .integer(Int64(work.links))),
            ("max_links_per_request", .integer(Int64(limits.linksPerRequest))),
            ("links_per_second", .integer(Int64(limits.linksPerSecondPerClient))),
        ]
        if let retryAfter { fields.append(("retry_after", .integer(Int64(retryAfter)))) }
        return .object([("error", .object(fields))])
    }
}
