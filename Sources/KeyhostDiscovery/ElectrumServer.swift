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

/// The Electrum source's own knobs; the HTTP ones (parallel connections, timeout, retries, backoff) are shared.
public struct ElectrumOptions: Sendable {
    /// A PEM file with the server's own (self-signed) certificate, or an authority that signed it: only it is
    /// then trusted for ssl://, not the system's authorities.
    public var certificateFile: String?
    /// The SHA-256 fingerprint of the server's certificate, in hex (colons and spaces allowed), as
    /// `openssl x509 -noout -fingerprint -sha256` prints it.
    public var fingerprint: String?
    /// The client name sent in `server.version`.
    public var clientName = "keyhost"
    /// Seconds a connection may sit idle before a `server.ping` keeps it open (ElectrumX drops a session that
    /// says nothing for about ten minutes).
    public var keepAlive: Double = 60
    /// The longest message accepted from the server. ElectrumX answers at most 1 MB at once by default and Fulcrum
    /// buffers 8 MB per client, so 16 MiB leaves room; past it the line is refused, not buffered further.
    public var maxLineLength = 16 << 20
    /// A batch of addresses is split across connections only into requests of at least this many, so a
    /// gap-sized batch costs one round trip on one connection.
    public var minimumPerRequest = 25
    /// The most calls in one batch. Servers bound batches (Fulcrum allows 345 batched calls per client address
    /// at once, ElectrumX caps the size of an answer), and the engine's batches are 100 unless told otherwise.
    public var maximumPerRequest = 100

    public init(certificateFile: String? = nil, fingerprint: String? = nil, clientName: String = "keyhost", keepAlive: Double = 60) {
        self.certificateFile = certificateFile
        self.fingerprint = fingerprint
        self.clientName = clientName
        self.keepAlive = keepAlive
    }

    /// The fingerprint as 32 bytes, or an error saying what is wrong with it.
    func fingerprintBytes() throws -> [UInt8]? {
        guard let fingerprint else { return nil }
        var text = fingerprint.trimmingWhitespace().lowercased()
        if text.hasPrefix("sha256:") { text.removeFirst("sha256:".count) }
        let digits = text.filter { $0 != ":" && $0 != " " }
        guard digits.count == 64, let bytes = try? Hex.decode(digits) else {
            throw DiscoveryError.invalidOption(name: "Electrum certificate fingerprint", detail: "\"\(fingerprint)\" is not a SHA-256 "
                + "fingerprint (64 hex digits, colons allowed, as `openssl x509 -noout -fingerprint -sha256 -in cert.pem` prints it)")
        }
        return bytes
    }

    /// Throws the first option that cannot work.
    public func validate() throws {
        guard minimumPerRequest >= 1, maximumPerRequest >= minimumPerRequest else {
            throw DiscoveryError.invalidOption(name: "Electrum request sizes", detail: "\(minimumPerRequest)...\(maximumPerRequest) addresses per request")
        }
        guard keepAlive > 0, keepAlive.isFinite else {
            throw DiscoveryError.invalidOption(name: "Electrum keep-alive", detail: "\(keepAlive); it must be a positive number of seconds")
        }
        _ = try fingerprintBytes()
    }
}
