import KeyhostCrypto

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
