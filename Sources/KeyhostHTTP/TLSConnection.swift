import COpenSSL
import KeyhostCrypto
#if canImport(Glibc)
import Glibc
#endif

/// A client-side TLS configuration: OpenSSL's SSL_CTX with the system's trust store (plus an optional extra CA
/// file) and peer verification on. One per HTTPClient, shared by its threads (SSL_CTX is thread-safe for SSL_new).
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    /// Set when the certificate is judged after the handshake (see `init(pins:)`).
    let pins: TLSPins?

    public init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPTransportError(.tls, "TLS setup failed: \(TLSContext.drainErrors())")
        }
        self.context = context
        pins = nil
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        // Peers that close without close_notify are common; message framing (Content-Length, chunked) guards
        // truncation. SSL_OP_IGNORE_UNEXPECTED_EOF is a macro built from SSL_OP_BIT(7) and is not imported.
        SSL_CTX_set_options(context, UInt64(1) << 7)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw HTTPTransportError(.tls, "cannot load the system certificates: \(TLSContext.drainErrors())")
        }
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw HTTPTransportError(.tls, "cannot load CA file \(caFile): \(TLSContext.drainErrors())")
            }
        }
    }

    /// A context that judges the server's certificate itself, right after the handshake and before a byte of
    /// the application is sent: with `pins` empty, the system's authorities must vouch for it and name the host
    /// (as `init(caFile:)` checks); otherwise only the pins count: a pinned certificate or fingerprint, or a chain
    /// to a pinned certificate that names the host. Either way a refusal carries the certificate's fingerprint,
    /// so that a user can pin their own server's self-signed certificate.
    public init(pins: TLSPins) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPTransportError(.tls, "TLS setup failed: \(TLSContext.drainErrors())")
        }
        self.context = context
        self.pins = pins
        // The handshake goes on whatever the verdict; TLSSession refuses the peer before anything is written.
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        SSL_CTX_set_options(context, UInt64(1) << 7)  // SSL_OP_IGNORE_UNEXPECTED_EOF, as above
        if pins.isEmpty {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw HTTPTransportError(.tls, "cannot load the system certificates: \(TLSContext.drainErrors())")
            }
        } else {
            let store = SSL_CTX_get_cert_store(context)
            for der in pins.certificates {
                let certificate = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                    var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                    return d2i_X509(nil, &cursor, Int(buffer.count))
                }
                guard let certificate else { throw HTTPTransportError(.tls, "a pinned certificate does not parse: \(TLSContext.drainErrors())") }
                defer { X509_free(certificate) }
                // A duplicate is no error worth stopping for; anything else is.
                if X509_STORE_add_cert(store, certificate) != 1 { ERR_clear_error() }
            }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// The queued OpenSSL errors as one readable line (and the queue emptied).
    static func drainErrors() -> String {
        var messages = [String]()
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            // "error:0A000086:SSL routines::certificate verify failed" → the part after the last "::" or ":".
            let full = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason = full.split(separator: ":").last.map(String.init) ?? full
            if !messages.contains(reason) { messages.append(reason) }
        }
        return messages.isEmpty ? "unknown TLS error" : messages.joined(separator: "; ")
    }
}

/// What a TLS client accepts instead of the system's certificate authorities: certificates (a server's own
/// self-signed one, or a private authority) and SHA-256 fingerprints of the server's certificate.
public struct TLSPins: Sendable, Equatable {
    /// DER certificates: the server may show one as it is, or a chain to one that names the host.
    public var certificates: [[UInt8]]
    /// SHA-256 fingerprints (32 bytes) of certificates the server may show.
    public var fingerprints: [[UInt8]]

    public init(certificates: [[UInt8]] = [], fingerprints: [[UInt8]] = []) {
        self.certificates = certificates
        self.fingerprints = fingerprints
    }

    public var isEmpty: Bool { certificates.isEmpty && fingerprints.isEmpty }

    /// The DER certificates of a PEM text (`-----BEGIN CERTIFICATE-----` blocks); other blocks are skipped.
    public static func certificates(pem: [UInt8]) throws -> [[UInt8]] {
        guard pem.count <= Int(Int32.max) else { throw HTTPTransportError(.tls, "the PEM file is too large") }
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw HTTPTransportError(.tls, "TLS setup failed: \(TLSContext.drainErrors())") }
        defer { BIO_free(bio) }
        var found = [[UInt8]]()
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(certificate) }
            found.append(try derBytes(certificate))
        }
        ERR_clear_error()  // the read that ends the loop queues "no start line"
        return found
    }

    /// Colon-separated uppercase hex, as `openssl x509 -fingerprint -sha256` prints it.
    public static func display(_ fingerprint: [UInt8]) -> String {
        fingerprint.map { Hex.encode([$0]).uppercased() }.joined(separator: ":")
    }
}

/// The DER encoding of an X509 certificate.
private func derBytes(_ certificate: OpaquePointer) throws -> [UInt8] {
    let length = i2d_X509(certificate, nil)
    guard length > 0 else { throw HTTPTransportError(.tls, "cannot encode a certificate: \(TLSContext.drainErrors())") }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
        return i2d_X509(certificate, &cursor)
    }
    guard written == length else { throw HTTPTransportError(.tls, "cannot encode a certificate: \(TLSContext.drainErrors())") }
    return der
}

/// One TLS session over a connected non-blocking socket. Every operation waits with poll until `deadline`.
final class TLSSession {
    private let ssl: OpaquePointer
    private let fd: Int32
    /// Moved by a persistent connection before each exchange.
    var deadline: UInt64
    /// The SHA-256 fingerprint of the peer's certificate, when the context judged it (`TLSContext(pins:)`).
    private(set) var peerFingerprint: [UInt8]?

    /// Handshakes with `host` (SNI for names, certificate name or IP check for both).
    init(context: TLSContext, fd: Int32, host: String, deadline: UInt64) throws {
        guard let ssl = SSL_new(context.context) else {
            throw HTTPTransportError(.tls, "TLS setup failed: \(TLSContext.drainErrors())")
        }
        self.ssl = ssl
        self.fd = fd
        self.deadline = deadline
        guard let bio = BIO_new(TLSSession.socketMethod) else {
            throw HTTPTransportError(.tls, "TLS setup failed: \(TLSContext.drainErrors())")
        }
        BIO_set_data(bio, UnsafeMutableRawPointer(bitPattern: Int(fd) + 1))
        BIO_set_init(bio, 1)
        SSL_set_bio(ssl, bio, bio)  // the SSL owns the BIO now
        if isIPAddress(host) {
            // No SNI for IP literals (RFC 6066 §3); the certificate must name the IP.
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            // SSL_set_tlsext_host_name is a macro over SSL_ctrl, so SSL_ctrl is called directly.
            _ = host.withCString { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)) }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard SSL_set1_host(ssl, host) == 1 else {
                throw HTTPTransportError(.tls, "TLS setup failed for \(host): \(TLSContext.drainErrors())")
            }
        }
        _ = try perform("TLS handshake") { SSL_connect(ssl) }
        if let pins = context.pins { try judgePeer(pins) }
    }

    /// Accepts the peer's certificate as `TLSContext(pins:)` says, or throws naming its fingerprint.
    private func judgePeer(_ pins: TLSPins) throws {
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            throw HTTPTransportError(.tls, "the server showed no certificate")
        }
        defer { X509_free(certificate) }
        let der = try derBytes(certificate)
        let fingerprint = Hash.sha256(der)
        peerFingerprint = fingerprint
        if pins.fingerprints.contains(fingerprint) || pins.certificates.contains(der) { return }
        let verify = SSL_get_verify_result(ssl)
        if verify == Int(X509_V_OK) { return }
        let reason = String(cString: X509_verify_cert_error_string(verify))
        var error = HTTPTransportError(.tls, "TLS handshake refused: "
            + (pins.isEmpty ? "certificate verify failed (\(reason))" : "the certificate matches no pin (\(reason))")
            + "; the server's certificate has SHA-256 fingerprint \(TLSPins.display(fingerprint))")
        error.certificateFingerprint = fingerprint
        throw error
    }

    deinit { SSL_free(ssl) }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let chunk = Int32(min(bytes.count - offset, 1 << 20))
            let n = try perform("TLS write") { SSL_write(ssl, bytes.baseAddress! + offset, chunk) }
            guard n > 0 else { throw HTTPTransportError(.connectionLost, "connection lost") }
            offset += Int(n)
        }
    }

    /// Bytes read into `buffer`; 0 at the end of the stream.
    func read(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        Int(try perform("TLS read") { SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max)))) })
    }

    /// Runs an SSL call until it completes, polling the socket whenever OpenSSL wants to read or write.
    /// Returns the call's positive result, or 0 for a clean end of stream.
    private func perform(_ what: String, _ call: () -> Int32) throws -> Int32 {
        while true {
            ERR_clear_error()
            errno = 0
            let result = call()
            if result > 0 { return result }
            let code = SSL_get_error(ssl, result)
            switch code {
            case SSL_ERROR_WANT_READ: try waitForSocket(fd, events: POLLIN, deadline: deadline)
            case SSL_ERROR_WANT_WRITE: try waitForSocket(fd, events: POLLOUT, deadline: deadline)
            case SSL_ERROR_ZERO_RETURN: return 0
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                if errno == 0 { return 0 }
                throw HTTPTransportError.fromErrno(errno, during: what)
            default:
                let verify = SSL_get_verify_result(ssl)
                let queued = TLSContext.drainErrors()
                if verify != Int(X509_V_OK) {
                    let reason = String(cString: X509_verify_cert_error_string(verify))
                    throw HTTPTransportError(.tls, "\(what) failed: certificate verify failed (\(reason))")
                }
                throw HTTPTransportError(.tls, "\(what) failed: \(queued)")
            }
        }
    }

    /// A socket BIO that sends with MSG_NOSIGNAL (a peer that resets the connection must not raise SIGPIPE,
    /// which the stock socket BIO's write() would) and reports EAGAIN as "retry" for the poll loop above.
    /// The fd is kept in the BIO's data pointer as fd + 1.
    // Made once and only read after: OpenSSL's BIO_METHOD is immutable once set up.
    nonisolated(unsafe) private static let socketMethod: OpaquePointer = {
        let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "keyhost socket")!
        BIO_meth_set_write(method) { bio, data, length in
            let fd = Int32(Int(bitPattern: BIO_get_data(bio)) - 1)
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
            let n = send(fd, data, Int(length), Int32(MSG_NOSIGNAL))
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY)
            }
            return Int32(n)
        }
        BIO_meth_set_read(method) { bio, data, length in
            let fd = Int32(Int(bitPattern: BIO_get_data(bio)) - 1)
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
            let n = recv(fd, data, Int(length), 0)
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY)
            }
            return Int32(n)
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            command == BIO_CTRL_FLUSH ? 1 : 0
        }
        return method
    }()
}
