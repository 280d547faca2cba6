import KeyhostCard

#if canImport(Glibc)
import Glibc
#endif

/// Where vpcd listens (pcscd's vsmartcard driver): the virtual card connects to it as a TCP client.
public struct VPCDEndpoint: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public static let defaultPort: UInt16 = 35963
    public static let `default` = VPCDEndpoint(host: "127.0.0.1", port: defaultPort)

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, `HOST`, `:PORT` or `PORT`; `[v6addr]:PORT` for IPv6.
    public init(parsing text: String) throws {
        var host = VPCDEndpoint.default.host
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw VPCDError.badEndpoint(text) }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw VPCDError.badEndpoint(text) }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            if colon != text.startIndex { host = String(text[..<colon]) }
            portText = text[text.index(after: colon)...]
        } else if text.allSatisfy(\.isNumber) {
            portText = Substring(text)
        } else {
            host = text
        }
        var port = VPCDEndpoint.defaultPort
        if let portText {
            guard let value = UInt16(portText), value > 0 else { throw VPCDError.badEndpoint(text) }
            port = value
        }
        guard !host.isEmpty else { throw VPCDError.badEndpoint(text) }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

public enum VPCDError: Error, Equatable, CustomStringConvertible {
    case badEndpoint(String)
    case resolve(String, String)
    case socket(operation: String, errno: Int32)
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .badEndpoint(let text): return "\"\(text)\" is not HOST:PORT (e.g. 127.0.0.1:35963)"
        case .resolve(let host, let why): return "cannot resolve \(host): \(why)"
        case .socket(let operation, let code): return "\(operation) failed: \(String(cString: strerror(code)))"
        case .protocolViolation(let why): return "vpcd protocol: \(why)"
        }
    }
}

/// SIGINT / SIGTERM set a flag the serving loop checks (handlers installed without SA_RESTART, so a blocked
/// `recv` returns EINTR at once).
public enum VPCDStopSignal {
    nonisolated(unsafe) static var flag: sig_atomic_t = 0

    public static var received: Bool { flag != 0 }

    public static func install() {
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in VPCDStopSignal.flag = 1 }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
    }
}

// Linux <netinet/tcp.h> values, spelled out because the Glibc module does not export all of them.
private let tcpNoDelay: Int32 = 1   // TCP_NODELAY
private let tcpQuickAck: Int32 = 12 // TCP_QUICKACK

/// Connects a `VPCDCard` to vpcd and answers it until stopped; reconnects with backoff when pcscd goes away.
///
/// Latency: vpcd sends each frame's 2-byte length and its body in two writes, with Nagle on. If this side
/// delays its ACK of the first segment (Linux does, up to 40 ms), vpcd's Nagle holds back the body until
/// then. So: TCP_QUICKACK is set again after every read (Linux clears it), TCP_NODELAY is set, and each
/// answer (length and body) goes out in a single `send`.
public final class VPCDClient {
    public let card: VPCDCard
    public let endpoint: VPCDEndpoint
    /// One line per event (connected, reconnecting); the CLI prints it on stderr.
    public var log: (String) -> Void
    /// Polled between frames and while waiting: return true to stop.
    public var shouldStop: () -> Bool
    /// Backoff between connection attempts: starts at `minimumBackoff`, doubles up to `maximumBackoff` (seconds).
    public var minimumBackoff = 0.05
    public var maximumBackoff = 1.0

    public private(set) var exchanges = 0
    /// Logs every frame (KEYHOST_VPCD_TRACE=1 in the environment).
    public var trace = getenv("KEYHOST_VPCD_TRACE").map { String(cString: $0) == "1" } ?? false
    /// TCP_NODELAY, TCP_QUICKACK after every read, and one `send` per answer. Off only to measure what they
    /// save (KEYHOST_VPCD_NAGLE=1 in the environment; scripts/bench does).
    public var lowLatency = getenv("KEYHOST_VPCD_NAGLE").map { String(cString: $0) != "1" } ?? true

    private var fd: Int32 = -1
    private var buffer: [UInt8] = []

    public init(card: VPCDCard, endpoint: VPCDEndpoint = .default, log: @escaping (String) -> Void = { _ in },
                shouldStop: @escaping () -> Bool = { VPCDStopSignal.received }) {
        self.card = card
        self.endpoint = endpoint
        self.log = log
        self.shouldStop = shouldStop
    }

    deinit { closeSocket() }

    /// Serves until `shouldStop()`; connection failures are retried, never thrown.
    public func run() {
        var backoff = minimumBackoff
        var everConnected = false
        var waitingLogged = false
        while !shouldStop() {
            do {
                try connect()
            } catch {
                if !waitingLogged {
                    log(everConnected ? "vpcd \(endpoint): \(error); reconnecting" : "vpcd \(endpoint): \(error); waiting for pcscd")
                    waitingLogged = true
                }
                pause(backoff)
                backoff = min(backoff * 2, maximumBackoff)
                continue
            }
            backoff = minimumBackoff
            waitingLogged = false
            everConnected = true
            log("vpcd \(endpoint): connected")
            let reason = serve()
            closeSocket()
            card.powerOff()
            if shouldStop() { break }
            log("vpcd \(endpoint): \(reason); reconnecting")
            waitingLogged = true
            pause(minimumBackoff)
        }
    }

    private func pause(_ seconds: Double) {
        var left = seconds
        while left > 0 && !shouldStop() {
            let slice = min(left, 0.05)
            usleep(UInt32(slice * 1_000_000))
            left -= slice
        }
    }

    // MARK: - Socket

    func connect() throws {
        closeSocket()
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard rc == 0, let first = list else { throw VPCDError.resolve(endpoint.host, String(cString: gai_strerror(rc))) }
        defer { freeaddrinfo(list) }
        var lastErrno: Int32 = 0
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let ai = info {
            info = ai.pointee.ai_next
            let s = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), ai.pointee.ai_protocol)
            guard s >= 0 else { lastErrno = errno; continue }
            if Glibc.connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 {
                fd = s
                var one: Int32 = 1
                if lowLatency {
                    setsockopt(s, Int32(IPPROTO_TCP), tcpNoDelay, &one, socklen_t(MemoryLayout<Int32>.size))
                    setsockopt(s, Int32(IPPROTO_TCP), tcpQuickAck, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                // Wake up every 200 ms to look at shouldStop() even when vpcd is silent.
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                buffer.removeAll(keepingCapacity: true)
                return
            }
            lastErrno = errno
            close(s)
        }
        throw VPCDError.socket(operation: "connect to \(endpoint)", errno: lastErrno)
    }

    private func closeSocket() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// Answers frames until the connection ends or a stop is requested; returns why it ended.
    private func serve() -> String {
        while !shouldStop() {
            let frame: [UInt8]
            do {
                guard let f = try readFrame() else { return "connection closed by pcscd" }
                frame = f
            } catch {
                return "\(error)"
            }
            if trace { log("<- \(frame.map { String($0, radix: 16) }.joined(separator: " "))") }
            if frame.count == 1 {
                switch frame[0] {
                case 0: card.powerOff()
                case 1: card.powerOn()
                case 2: card.reset()
                case 4:
                    do { try send(card.atr) } catch { return "\(error)" }
                default: break  // unknown control message: ignore, as vicc does
                }
                continue
            }
            let answer = card.respond(to: frame)
            exchanges += 1
            do { try send(answer) } catch { return "\(error)" }
        }
        return "stopped"
    }

    /// The next frame's payload; nil on end of stream. Throws on socket errors; returns nil-free on stop.
    private func readFrame() throws -> [UInt8]? {
        guard try fill(2) else { return nil }
        let length = Int(buffer[0]) << 8 | Int(buffer[1])
        guard try fill(2 + length) else { return nil }
        let payload = Array(buffer[2..<(2 + length)])
        buffer.removeFirst(2 + length)
        return payload
    }

    /// Reads until `count` bytes are buffered; false on end of stream or stop.
    private func fill(_ count: Int) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.count < count {
            if shouldStop() { return false }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                // Linux turns quick-ACK mode off again on its own: ask for it after every read.
                if lowLatency {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), tcpQuickAck, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                continue
            }
            if n == 0 { return false }
            let e = errno
            if e == EINTR || e == EAGAIN || e == EWOULDBLOCK { continue }
            throw VPCDError.socket(operation: "recv", errno: e)
        }
        return true
    }

    /// One frame, length and payload in a single `send`.
    private func send(_ payload: [UInt8]) throws {
        guard payload.count <= 0xFFFF else { throw VPCDError.protocolViolation("answer of \(payload.count) bytes does not fit a frame") }
        let header = [UInt8(truncatingIfNeeded: payload.count >> 8), UInt8(truncatingIfNeeded: payload.count)]
        if lowLatency {
            try sendAll(header + payload)
        } else {
            try sendAll(header)  // as vpcd itself does: two writes
            try sendAll(payload)
        }
    }

    private func sendAll(_ frame: [UInt8]) throws {
        var sent = 0
        while sent < frame.count {
            let n = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw VPCDError.socket(operation: "send", errno: errno)
            }
            sent += n
        }
    }
}
