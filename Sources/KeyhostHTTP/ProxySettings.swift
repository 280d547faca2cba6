#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto

/// Which proxy each connection goes through, decided once per run.
///
/// The rule (docs/proxies.md): a proxy given explicitly (`--proxy`, Lua's `proxy =`) carries every connection,
/// loopback included, and `NO_PROXY` does not apply to it: nothing leaves the machine except through it. Without
/// one, the conventional variables apply as curl reads them: `https_proxy` for https URLs, `http_proxy` for http
/// URLs, `all_proxy` for those and for everything else (Electrum), lower case before upper case, and `no_proxy`
/// lists hosts that go direct. Loopback hosts never go through a proxy taken from the environment (Go's rule:
/// a test server on 127.0.0.1 must not be sent to a corporate proxy). `direct` ignores the environment.
public struct ProxySettings: Sendable, Equatable {
    public var explicit: Proxy?
    public var all: Proxy?
    public var https: Proxy?
    public var http: Proxy?
    public var noProxy: NoProxyList

    /// No proxy for anything.
    public static let direct = ProxySettings(explicit: nil, all: nil, https: nil, http: nil, noProxy: NoProxyList(""))

    public init(explicit: Proxy?, all: Proxy?, https: Proxy?, http: Proxy?, noProxy: NoProxyList) {
        self.explicit = explicit
        self.all = all
        self.https = https
        self.http = http
        self.noProxy = noProxy
    }

    /// The settings for `option` (a proxy URL, `direct`, or nil for "as the environment says") and the
    /// environment `variable` reads. A malformed value is an error naming where it came from.
    public init(option: String?, optionName: String = "--proxy", variable: (String) -> String? = ProxySettings.processVariable) throws {
        if let option {
            if option.trimmingWhitespace().lowercased() == "direct" {
                self = .direct
            } else {
                self = ProxySettings(explicit: try Proxy(option, what: optionName), all: nil, https: nil, http: nil, noProxy: NoProxyList(""))
            }
            return
        }
        func read(_ name: String) throws -> Proxy? {
            for spelling in [name, name.uppercased()] {
                if let value = variable(spelling), !value.trimmingWhitespace().isEmpty { return try Proxy(value, what: spelling) }
            }
            return nil
        }
        let noProxy = variable("no_proxy") ?? variable("NO_PROXY") ?? ""
        self.init(explicit: nil, all: try read("all_proxy"), https: try read("https_proxy"), http: try read("http_proxy"),
                  noProxy: NoProxyList(noProxy))
    }

    /// The proxy for a connection to `host` made for a URL of `scheme` (`https`, `http`, or another such as
    /// `electrum`), or nil for a direct connection.
    public func proxy(scheme: String, host: String) -> Proxy? {
        if let explicit { return explicit }
        let fromEnvironment: Proxy?
        switch scheme.lowercased() {
        case "https": fromEnvironment = https ?? all
        case "http": fromEnvironment = http ?? all
        default: fromEnvironment = all
        }
        guard let fromEnvironment, !NoProxyList.isLoopback(host), !noProxy.matches(host) else { return nil }
        return fromEnvironment
    }

    /// Whether any connection may go through a proxy.
    public var isEmpty: Bool { explicit == nil && all == nil && https == nil && http == nil }

    /// Every proxy with SOCKS credentials under `key` (see `Proxy.isolated`).
    public func isolated(_ key: String) -> ProxySettings {
        var copy = self
        copy.explicit = explicit?.isolated(key)
        copy.all = all?.isolated(key)
        copy.https = https?.isolated(key)
        copy.http = http?.isolated(key)
        return copy
    }

    /// A random isolation key: one per run, or one per wallet of a job.
    public static func freshIsolationKey() -> String {
        var bytes = [UInt8](repeating: 0, count: 8)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        return bytes.map { String($0, radix: 16) }.joined()
    }

    /// The process's environment variable `name`.
    public static func processVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// The hosts `NO_PROXY` sends direct: `*` (all), names (matching the name and every name under it, with or
/// without a leading dot), IP addresses and CIDR blocks such as `10.0.0.0/8` or `fd00::/8`. A port after a
/// name is ignored, as curl does.
public struct NoProxyList: Sendable, Equatable {
    private var everything = false
    private var names = [String]()
    private var blocks = [(address: [UInt8], bits: Int)]()

    public init(_ text: String) {
        for raw in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var entry = raw.lowercased()
            if entry == "*" { everything = true; continue }
            if let (address, bits) = NoProxyList.block(entry) { blocks.append((address, bits)); continue }
            if entry.hasPrefix("[") , let close = entry.firstIndex(of: "]") {
                entry = String(entry[entry.index(after: entry.startIndex)..<close])
            } else if let colon = entry.lastIndex(of: ":"), entry.filter({ $0 == ":" }).count == 1 {
                entry = String(entry[..<colon])  // host:port
            }
            while entry.hasPrefix(".") { entry.removeFirst() }
            if entry.hasPrefix("*.") { entry.removeFirst(2) }
            if let address = NoProxyList.address(entry) { blocks.append((address, address.count * 8)); continue }
            if !entry.isEmpty { names.append(entry) }
        }
    }

    public static func == (a: NoProxyList, b: NoProxyList) -> Bool {
        a.everything == b.everything && a.names == b.names && a.blocks.map(\.address) == b.blocks.map(\.address)
            && a.blocks.map(\.bits) == b.blocks.map(\.bits)
    }

    /// Whether `host` (a name or an IP literal, without brackets) goes direct.
    public func matches(_ host: String) -> Bool {
        if everything { return true }
        let lowered = host.lowercased().trimmingSuffixDots()
        if let address = NoProxyList.address(lowered) {
            return blocks.contains { NoProxyList.prefixMatches(address, $0.address, bits: $0.bits) }
        }
        return names.contains { lowered == $0 || lowered.hasSuffix("." + $0) }
    }

    /// Whether `host` is this machine: `localhost` (and names under it), 127.0.0.0/8 or ::1.
    public static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased().trimmingSuffixDots()
        if lowered == "localhost" || lowered.hasSuffix(".localhost") { return true }
        guard let address = address(lowered) else { return false }
        if address.count == 4 { return address[0] == 127 }
        return address == [UInt8](repeating: 0, count: 15) + [1]
            || (address[0..<12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] && address[12] == 127)
    }

    /// An IPv4 or IPv6 literal's bytes.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    private static func block(_ text: String) -> ([UInt8], Int)? {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        var host = parts[0]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard let address = address(String(host)), let bits = Int(parts[1]),
              (0...(address.count * 8)).contains(bits) else { return nil }
        return (address, bits)
    }

    private static func prefixMatches(_ address: [UInt8], _ block: [UInt8], bits: Int) -> Bool {
        guard address.count == block.count else { return false }
        for bit in 0..<bits {
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            if address[bit / 8] & mask != block[bit / 8] & mask { return false }
        }
        return true
    }
}

private extension String {
    /// The name without the trailing dots of a fully qualified spelling (`example.org.`).
    func trimmingSuffixDots() -> String {
        var copy = self
        while copy.hasSuffix(".") { copy.removeLast() }
        return copy
    }
}
