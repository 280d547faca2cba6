import KeyhostCrypto

/// A proxy every byte of a connection goes through: SOCKS5 (RFC 1928, with RFC 1929 user name and
/// password) or an HTTP proxy's CONNECT tunnel (RFC 9110 §9.3.6).
///
/// Written as curl and the `*_PROXY` variables spell them: `socks5h://HOST:PORT` (the proxy resolves names,
/// as Tor needs), `socks5://HOST:PORT` (names resolved here), `http://HOST:PORT` or a bare `HOST:PORT`
/// (CONNECT), each with an optional `USER:PASSWORD@` and a default port of 1080.
public struct Proxy: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case socks5h, socks5, http
    }

    public var kind: Kind
    /// The proxy's own host (an IP literal or a name resolved here), without IPv6 brackets.
    public var host: String
    public var port: Int
    /// Credentials sent to the proxy. The password never appears in `description` or an error.
    public var username: String?
    public var password: String?

    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// Parses a proxy URL; `what` names where it came from (`--proxy`, `ALL_PROXY`) in the error.
    public init(_ text: String, what: String) throws {
        let trimmed = text.trimmingWhitespace()
        func refuse(_ problem: String) -> ProxyError {
            ProxyError("\(what) is \"\(Proxy.redacted(trimmed))\": \(problem); write socks5h://HOST:PORT (Tor: socks5h://127.0.0.1:9050), "
                + "socks5://HOST:PORT or http://HOST:PORT")
        }
        var rest = Substring(trimmed)
        if let range = Proxy.schemeSeparator(in: rest) {
            let scheme = rest[..<range.lowerBound].lowercased()
            rest = rest[range.upperBound...]
            switch scheme {
            case "socks5h": kind = .socks5h
            case "socks5": kind = .socks5
            case "http": kind = .http
            case "https": throw refuse("a TLS connection to the proxy itself (https://) is not supported")
            case "socks4", "socks4a": throw refuse("SOCKS4 cannot carry IPv6 or authenticate")
            default: throw refuse("unknown proxy scheme \"\(scheme)\"")
            }
        } else {
            kind = .http  // as curl: a proxy without a scheme is an HTTP proxy
        }
        // A path ("/" or more) after the authority means nothing to a proxy; only "/" is allowed.
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else { throw refuse("a proxy URL has no path") }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Proxy.percentDecoded(parts[0]), let pass = parts.count > 1 ? Proxy.percentDecoded(parts[1]) : "" else {
                throw refuse("bad percent-encoding in the user name or password")
            }
            guard !user.isEmpty else { throw refuse("the user name before '@' is empty") }
            guard user.utf8.count <= 255, pass.utf8.count <= 255 else { throw refuse("a user name or password is longer than 255 bytes") }
            username = user
            password = parts.count > 1 ? pass : nil
        } else {
            username = nil
            password = nil
        }
        var hostPart: Substring
        var portPart: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw refuse("an IPv6 address misses its ']'") }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("junk after the IPv6 address") }
                portPart = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            hostPart = rest[..<colon]
            portPart = rest[rest.index(after: colon)...]
        } else {
            hostPart = rest
        }
        guard !hostPart.isEmpty else { throw refuse("no host") }
        guard hostPart.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "%" }) else { throw refuse("the host is not an ASCII name or IP address") }
        host = String(hostPart)
        if let portPart {
            guard let number = Int(portPart), (1...65535).contains(number) else { throw refuse("bad port \"\(portPart)\"") }
            port = number
        } else {
            port = 1080
        }
    }

    /// The proxy as messages show it: scheme, host and port, never the credentials.
    public var description: String {
        "\(kind.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// This proxy with SOCKS credentials that put the connections under `key` on circuits of their own: Tor
    /// isolates streams by SOCKS user name and password (IsolateSOCKSAuth, on by default).
    /// An HTTP proxy is left as it is: it has no such isolation, and credentials it did not ask for could be refused.
    public func isolated(_ key: String) -> Proxy {
        guard kind != .http else { return self }
        var copy = self
        copy.username = "keyhost-" + key
        copy.password = "keyhost"
        return copy
    }

    /// The `Proxy-Authorization` value for an HTTP proxy (`Basic` of user:password), nil without a user name:
    /// the one place it is written, for CONNECT tunnels and forwarded requests alike.
    var basicAuthorization: String? {
        guard let username else { return nil }
        var secret = Array("\(username):\(password ?? "")".utf8)
        defer { for index in secret.indices { secret[index] = 0 } }
        return "Basic " + Base64.encode(secret)
    }

    /// `text` with any `:password@` replaced, for error messages.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let head = text[..<at]
        let start = schemeSeparator(in: head)?.upperBound ?? head.startIndex
        guard let colon = head[start...].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }

    /// Where "://" is in `text`.
    private static func schemeSeparator(in text: Substring) -> Range<String.Index>? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix("://") { return index..<text.index(index, offsetBy: 3) }
            index = text.index(after: index)
        }
        return nil
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes = [UInt8]()
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// A proxy setting that cannot be used, worded for the user (it names the option or variable).
public struct ProxyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
