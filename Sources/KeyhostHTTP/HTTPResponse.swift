#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCrypto

/// One HTTP answer, read whole.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header's value, its name compared without case.
    public func header(_ name: String) -> String? {
        headers.first { sameHeaderName($0.key, name) }?.value
    }

    /// The start of the body, for error messages.
    public var snippet: String {
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingWhitespaceAndNewlines()
        return body.count > 200 ? text + "…" : text
    }
}
