import KeyhostHTTP

/// Why an exchange with an Electrum server failed, and whether another attempt (on a new connection) may help.
struct ElectrumFailure: Error, CustomStringConvertible {
    enum Kind {
        /// Connecting, TLS, a timeout, a closed connection: the server could not be talked to.
        case unreachable
        /// The server said something the protocol does not allow (bad JSON, a line over the cap, a wrong shape).
        case malformed
        /// The server answered with a JSON-RPC error object, or refused the protocol version.
        case refused
    }
    var kind: Kind
    var detail: String
    /// Worth another attempt: the connection broke, or the server said it is busy.
    var retryable: Bool
    /// The connection closed while a batch was awaited (some servers close on any batch: see ElectrumUsageSource).
    var closedOnBatch = false
    /// The TLS certificate refused, for a hint on pinning it.
    var certificateFingerprint: [UInt8]?

    var description: String { detail }

    static func transport(_ error: HTTPTransportError) -> ElectrumFailure {
        var failure = ElectrumFailure(kind: .unreachable, detail: error.message,
                                      retryable: ![.tls, .tooLarge, .badResponse].contains(error.kind))
        failure.certificateFingerprint = error.certificateFingerprint
        if error.kind == .tooLarge {
            failure.kind = .malformed
            failure.detail = "\(error.message) (keyhost's cap on one message): refused rather than buffered further"
        }
        return failure
    }

    static func malformed(_ detail: String) -> ElectrumFailure { ElectrumFailure(kind: .malformed, detail: detail, retryable: false) }
}
