import Testing
@testable import KeyhostHTTP

/// Proxy URLs, the environment's *_PROXY variables and NO_PROXY, as curl reads them (docs/proxies.md).
@Suite("Proxy settings")
struct ProxySettingsTests {
    @Test("Proxy URLs: schemes, default port, IPv6, credentials (percent-decoded, never shown)")
    func parsing() throws {
        let tor = try Proxy("socks5h://127.0.0.1:9050", what: "--proxy")
        #expect(tor == Proxy(kind: .socks5h, host: "127.0.0.1", port: 9050))
        #expect(try Proxy("socks5://[::1]", what: "x") == Proxy(kind: .socks5, host: "::1", port: 1080))
        #expect(try Proxy("proxy.lan:3128", what: "x") == Proxy(kind: .http, host: "proxy.lan", port: 3128))
        #expect(try Proxy("HTTP://proxy.lan:3128/", what: "x").kind == .http)
        let secret = try Proxy("socks5h://al%40ice:p%3Ass@tor:9050", what: "x")
        #expect(secret.username == "al@ice" && secret.password == "p:ss" && secret.host == "tor")
        #expect(secret.description == "socks5h://tor:9050")
        #expect(try Proxy("socks5h://[fd00::1]:9050", what: "x").description == "socks5h://[fd00::1]:9050")
    }

    @Test("Bad proxy URLs name where they came from and never show a password", arguments: [
        ("https://proxy:443", "TLS connection to the proxy"),
        ("socks4://proxy:1080", "SOCKS4"),
        ("gopher://proxy", "unknown proxy scheme"),
        ("socks5h://:9050", "no host"),
        ("socks5h://tor:99999", "bad port"),
        ("socks5h://tor:9050/path", "no path"),
        ("socks5h://user:hunter2@tor:x", "bad port"),
        ("socks5h://[::1", "misses its ']'"),
    ])
    func refused(text: String, problem: String) {
        do {
            _ = try Proxy(text, what: "ALL_PROXY")
            Issue.record("\(text) was accepted")
        } catch let error as ProxyError {
            #expect(error.description.hasPrefix("ALL_PROXY is \""), "\(error)")
            #expect(error.description.contains(problem), "\(error)")
            #expect(error.description.contains("socks5h://HOST:PORT"), "\(error)")
            #expect(!error.description.contains("hunter2"), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("The environment: lower case first, https_proxy for https, http_proxy for http, all_proxy for the rest")
    func environment() throws {
        let variables = ["ALL_PROXY": "socks5h://all:1", "all_proxy": "socks5h://lower:1", "HTTPS_PROXY": "http://secure:3128",
                         "http_proxy": "http://plain:3128"]
        let settings = try ProxySettings(option: nil) { variables[$0] }
        #expect(settings.proxy(scheme: "https", host: "esplora.example")?.host == "secure")
        #expect(settings.proxy(scheme: "http", host: "esplora.example")?.host == "plain")
        #expect(settings.proxy(scheme: "electrum", host: "electrum.example")?.host == "lower")
        let onlyAll = try ProxySettings(option: nil) { $0 == "ALL_PROXY" ? "socks5h://all:1" : nil }
        #expect(onlyAll.proxy(scheme: "https", host: "a.example")?.host == "all")
        #expect(onlyAll.proxy(scheme: "electrum", host: "a.example")?.host == "all")
        #expect(try ProxySettings(option: nil) { _ in nil }.isEmpty)
        #expect(throws: ProxyError.self) { try ProxySettings(option: nil) { $0 == "https_proxy" ? "ftp://x" : nil } }
    }

    @Test("An explicit proxy carries everything, loopback and NO_PROXY hosts included; 'direct' ignores the environment")
    func explicit() throws {
        let variables = ["ALL_PROXY": "socks5h://env:1", "NO_PROXY": "*"]
        let settings = try ProxySettings(option: "socks5h://127.0.0.1:9050") { variables[$0] }
        for host in ["127.0.0.1", "localhost", "esplora.invalid", "::1"] {
            #expect(settings.proxy(scheme: "https", host: host)?.port == 9050)
        }
        let direct = try ProxySettings(option: "direct") { variables[$0] }
        #expect(direct.proxy(scheme: "https", host: "esplora.example") == nil)
        #expect(direct.isEmpty)
    }

    @Test("NO_PROXY: names and their subdomains, leading dots, ports, IPs, CIDR blocks, '*'; loopback goes direct")
    func noProxy() throws {
        let variables = ["ALL_PROXY": "socks5h://env:1", "no_proxy": "example.org, .internal.lan,host.test:8080,10.0.0.0/8,[fd00::]/8,192.0.2.7"]
        let settings = try ProxySettings(option: nil) { variables[$0] }
        let direct = ["example.org", "a.b.example.org", "EXAMPLE.ORG.", "x.internal.lan", "internal.lan", "host.test", "10.1.2.3",
                      "fd00::5", "192.0.2.7", "localhost", "127.0.0.1", "127.8.9.1", "::1", "db.localhost"]
        let proxied = ["notexample.org", "example.org.evil", "lan", "11.0.0.1", "fe80::1", "192.0.2.8", "esplora.invalid"]
        for host in direct { #expect(settings.proxy(scheme: "https", host: host) == nil, "\(host)") }
        for host in proxied { #expect(settings.proxy(scheme: "https", host: host) != nil, "\(host)") }
        let everything = try ProxySettings(option: nil) { ["ALL_PROXY": "socks5h://env:1", "NO_PROXY": "*"][$0] }
        #expect(everything.proxy(scheme: "https", host: "esplora.example") == nil)
    }

    @Test("Isolation gives SOCKS proxies credentials of their own and leaves HTTP proxies alone")
    func isolation() throws {
        let settings = try ProxySettings(option: "socks5h://127.0.0.1:9050").isolated("wallet7")
        let proxy = try #require(settings.proxy(scheme: "https", host: "a.example"))
        #expect(proxy.username == "keyhost-wallet7" && proxy.password != nil)
        let http = try Proxy("http://proxy:3128", what: "x")
        #expect(http.isolated("wallet7") == http)
        #expect(ProxySettings.freshIsolationKey() != ProxySettings.freshIsolationKey())
    }
}
