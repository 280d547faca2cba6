#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto

/// Opens a tunnel to `host`:`port` through a proxy, over a stream already connected to the proxy. After it,
/// the stream carries the target's bytes (TLS starts on it next, for https and ssl://).
///
/// Every answer of the proxy is hostile input: lengths are checked before reading, and a refusal is reported
/// with the proxy's reason (RFC 1928 §6 reply codes, the CONNECT status line).
enum ProxyTunnel {
    static func open(_ stream: SocketStream, through proxy: Proxy, to host: String, port: Int) throws {
        switch proxy.kind {
        case .socks5, .socks5h: try socks5(stream, proxy, host: host, port: port)
        case .http: try connect(stream, proxy, host: host, port: port)
        }
    }

    private static func failure(_ proxy: Proxy, _ problem: String) -> HTTPTransportError {
        HTTPTransportError(.proxy, "through the proxy \(proxy): \(problem)")
    }

    // MARK: - SOCKS5

    private static func socks5(_ stream: SocketStream, _ proxy: Proxy, host: String, port: Int) throws {
        let credentials = proxy.username.map { (Array($0.utf8), Array((proxy.password ?? "").utf8)) }
        // Offer only the method that will be used: a proxy offered "no authentication" too may choose it and
        // so lose Tor's isolation by user name.
        let method: UInt8 = credentials == nil ? 0x00 : 0x02
        try stream.write([0x05, 0x01, method])
        let choice = try read(stream, proxy, 2)
        guard choice[0] == 0x05 else { throw failure(proxy, "it does not speak SOCKS5 (answered version \(choice[0]))") }
        guard choice[1] == method else {
            throw failure(proxy, choice[1] == 0xFF && method == 0x00
                ? "it wants a user name and password (write socks5h://USER:PASSWORD@HOST:PORT)"
                : "it refused the authentication offered (method \(method), it chose \(choice[1]))")
        }
        if let credentials {
            let user = credentials.0
            var password = credentials.1
            defer { zero(&password) }
            var message = [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password
            defer { zero(&message) }
            try stream.write(message)
            let status = try read(stream, proxy, 2)
            guard status[1] == 0x00 else { throw failure(proxy, "it refused the user name and password") }
        }

        var request: [UInt8] = [0x05, 0x01, 0x00]
        if let address = NoProxyList.address(host) {
            request += (address.count == 4 ? [0x01] : [0x04]) + address
        } else if proxy.kind == .socks5h {
            let name = Array(host.utf8)
            guard name.count <= 255 else { throw failure(proxy, "the host name \(host) is longer than SOCKS5's 255 bytes") }
            request += [0x03, UInt8(name.count)] + name
        } else {
            let address = try resolve(host, port: port)
            request += (address.count == 4 ? [0x01] : [0x04]) + address
        }
        request += [UInt8(port >> 8), UInt8(port & 0xFF)]
        try stream.write(request)

        let head = try read(stream, proxy, 4)
        guard head[0] == 0x05 else { throw failure(proxy, "a malformed SOCKS5 reply (version \(head[0]))") }
        guard head[1] == 0x00 else { throw failure(proxy, "it could not reach \(display(host, port)) (\(replyText(head[1])))") }
        // The bound address the proxy reports: read and ignore.
        switch head[3] {
        case 0x01: _ = try read(stream, proxy, 4 + 2)
        case 0x04: _ = try read(stream, proxy, 16 + 2)
        case 0x03: _ = try read(stream, proxy, Int(try read(stream, proxy, 1)[0]) + 2)
        default: throw failure(proxy, "a malformed SOCKS5 reply (address type \(head[3]))")
        }
    }

    /// RFC 1928 §6's words for a reply code.
    static func replyText(_ code: UInt8) -> String {
        switch code {
        case 0x01: return "general SOCKS server failure"
        case 0x02: return "connection not allowed by ruleset"
        case 0x03: return "network unreachable"
        case 0x04: return "host unreachable"
        case 0x05: return "connection refused"
        case 0x06: return "TTL expired"
        case 0x07: return "command not supported"
        case 0x08: return "address type not supported"
        default: return "reply code \(code)"
        }
    }

    /// `host`'s first address, looked up here (`socks5://`, where the user asked for local resolution).
    private static func resolve(_ host: String, port: Int) throws -> [UInt8] {
        try HTTPTransport.withAddresses(host: host, port: port, hint: "; socks5h:// lets the proxy look names up") { first in
            if first.pointee.ai_family == AF_INET6 {
                return first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin6_addr
                    return withUnsafeBytes(of: &address) { Array($0) }
                }
            }
            return first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var address = pointer.pointee.sin_addr
                return withUnsafeBytes(of: &address) { Array($0) }
            }
        }
    }

    // MARK: - HTTP CONNECT

    private static func connect(_ stream: SocketStream, _ proxy: Proxy, host: String, port: Int) throws {
        let authority = display(host, port)
        var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization = proxy.basicAuthorization { head += "Proxy-Authorization: \(authorization)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        defer { zero(&bytes) }
        try stream.write(bytes)
        let status: Int
        do {
            (status, _, _) = try HTTPTransport.readHead(stream)
        } catch let error as HTTPTransportError {
            throw failure(proxy, "no answer to CONNECT (\(error.message))")
        }
        switch status {
        case 200...299: break
        case 407: throw failure(proxy, "it wants a user name and password (407); write http://USER:PASSWORD@HOST:PORT")
        default: throw failure(proxy, "it refused CONNECT \(authority) with status \(status)")
        }
        guard !stream.hasBufferedBytes else { throw failure(proxy, "it sent bytes after its CONNECT answer") }
    }

    // MARK: -

    private static func read(_ stream: SocketStream, _ proxy: Proxy, _ count: Int) throws -> [UInt8] {
        do {
            return try stream.read(exactly: count)
        } catch let error as HTTPTransportError where error.kind == .connectionLost {
            throw failure(proxy, "it closed the connection during the handshake")
        }
    }

    private static func display(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func zero(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}
