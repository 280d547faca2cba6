import KeyhostCrypto

/// Where an Electrum server listens: `tcp://HOST:PORT` (plain) or `ssl://HOST:PORT` (TLS), as Electrum and
/// Sparrow write a server. Without a port, the protocol's customary 50001 (tcp) or 50002 (ssl).
public struct ElectrumServer: Equatable, Sendable, CustomStringConvertible {
    /// A name or an IP literal (IPv6 without its brackets).
    public let host: String
    public let port: Int
    public let useTLS: Bool

    public init(_ text: String) throws {
        let trimmed = text.trimmingWhitespace()
        let bad = { (why: String) in
            DiscoveryError.invalidOption(name: "Electrum server", detail: "\"\(text)\" \(why); write tcp://HOST:PORT or ssl://HOST:PORT, "
                + "e.g. electrum:ssl://electrum.example.org:50002 or electrum:tcp://127.0.0.1:50001")
        }
        guard let separator = trimmed.firstRange(of: "://") else { throw bad("has no tcp:// or ssl://") }
        switch trimmed[..<separator.lowerBound].lowercased() {
        case "tcp": useTLS = false
        case "ssl", "tls": useTLS = true
        default: throw bad("is neither tcp:// nor ssl://")
        }
        var rest = Substring(trimmed[separator.upperBound...])
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains(where: { $0.isWhitespace }) else {
            throw bad("is not a bare HOST:PORT (no path, user or spaces)")
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw bad("has an unclosed [ around its IPv6 address") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("has text after its IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard rest.firstIndex(of: ":") == colon else { throw bad("has an IPv6 address without [ ]") }
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard !host.isEmpty, host.utf8.count <= 253 else { throw bad("has no host") }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw bad("has a port that is not 1-65535") }
            port = number
        } else {
            port = useTLS ? 50002 : 50001
        }
    }

    /// e.g. "ssl://electrum.example.org:50002".
    public var description: String {
        "\(useTLS ? "ssl" : "tcp")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
