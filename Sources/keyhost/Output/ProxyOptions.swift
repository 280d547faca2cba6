import ArgumentParser
import KeyhostHTTP

/// `--proxy URL|direct` and `--proxy-isolate`: the option group of every command that connects to a server
/// (discovery sources, Electrum, a ledger service). Without `--proxy`, the *_PROXY variables apply (docs/proxies.md).
struct ProxyOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Connect through this proxy: socks5h://HOST:PORT (names resolved by the proxy; Tor: socks5h://127.0.0.1:9050), socks5://HOST:PORT or http://HOST:PORT (CONNECT); 'direct' ignores ALL_PROXY, HTTPS_PROXY and HTTP_PROXY.",
        valueName: "url"))
    var proxy: String?

    @Flag(help: "Through a SOCKS proxy: send this run's connections (with --jobs: each wallet's) with SOCKS credentials of their own, so that Tor gives them a circuit of their own.")
    var proxyIsolate = false

    func validate() throws { _ = try settings() }

    /// The proxies this run's connections go through: `--proxy`, else the environment; with `--proxy-isolate`,
    /// with credentials of this run's own.
    func settings() throws -> ProxySettings {
        let settings = try unisolated()
        return proxyIsolate ? settings.isolated(ProxySettings.freshIsolationKey()) : settings
    }

    /// The proxies before isolation (a job isolates each wallet instead).
    func unisolated() throws -> ProxySettings {
        do {
            let settings = try ProxySettings(option: proxy)
            if proxyIsolate && settings.isEmpty {
                throw ValidationError("--proxy-isolate needs a SOCKS proxy: give --proxy socks5h://HOST:PORT or set ALL_PROXY")
            }
            return settings
        } catch let error as ProxyError {
            throw ValidationError(error.description)
        }
    }
}
