import KeyhostCrypto
import KeyhostRecord
import Testing
@testable import KeyhostDiscovery

/// The Electrum source's pieces that need no server: server strings, protocol versions, pins, script hashes and
/// the judging of `get_history` answers. The talking is checked end to end in Tests/e2e/test_electrum_discovery.py.
@Suite("Electrum source")
struct ElectrumTests {
    @Test("Server strings: tcp:// and ssl://, default ports 50001 and 50002, IPv6 in brackets")
    func servers() throws {
        let plain = try ElectrumServer("tcp://127.0.0.1:50001")
        #expect(plain.host == "127.0.0.1" && plain.port == 50001 && !plain.useTLS)
        let tls = try ElectrumServer(" SSL://electrum.example.org ")
        #expect(tls.host == "electrum.example.org" && tls.port == 50002 && tls.useTLS)
        #expect(try ElectrumServer("tcp://electrum.example.org").port == 50001)
        let v6 = try ElectrumServer("ssl://[::1]:60002/")
        #expect(v6.host == "::1" && v6.port == 60002 && v6.description == "ssl://[::1]:60002")
        #expect(try ElectrumServer("tls://h:1").useTLS)
    }

    @Test("Bad server strings name the problem", arguments: [
        ("http://h:1", "is neither tcp:// nor ssl://"),
        ("h:50001", "has no tcp:// or ssl://"),
        ("tcp://h:0", "has a port that is not 1-65535"),
        ("tcp://h:65536", "has a port that is not 1-65535"),
        ("tcp://h:x", "has a port that is not 1-65535"),
        ("tcp://::1:50001", "has an IPv6 address without [ ]"),
        ("tcp://[::1", "has an unclosed ["),
        ("tcp://user@h:1", "is not a bare HOST:PORT"),
        ("tcp://h:1/path", "is not a bare HOST:PORT"),
        ("tcp://", "is not a bare HOST:PORT"),
        ("tcp://:1", "has no host"),
    ])
    func badServers(text: String, problem: String) {
        do {
            _ = try ElectrumServer(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect("\(error)".contains(problem), "\(error)")
        }
    }

    @Test("Protocol versions compare part by part; malformed ones are refused")
    func versions() throws {
        let v = { (text: String) in try #require(ElectrumVersion(text)) }
        #expect(try v("1.2") < v("1.4"))
        #expect(try v("1.4") < v("1.4.2"))
        #expect(try v("1.4.2") < v("1.10"))
        #expect(try v("1.4.0") == v("1.4"))
        #expect(try v("2.0") > v("1.99.99"))
        for bad in ["1", "a.b", "1..4", "1.4.", "-1.4", "1.4.1.1.1", "1.1234567", "１.4"] {
            #expect(ElectrumVersion(bad) == nil, "\(bad)")
        }
    }

    @Test("Fingerprints: 64 hex digits, colons, spaces and a sha256: prefix allowed")
    func fingerprints() throws {
        let hex = String(repeating: "ab", count: 32)
        let colons = stride(from: 0, to: 64, by: 2).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)]).uppercased()
        }.joined(separator: ":")
        for text in [hex, colons, "sha256:" + colons, " " + hex.uppercased() + " "] {
            #expect(try ElectrumOptions(fingerprint: text).fingerprintBytes() == [UInt8](repeating: 0xab, count: 32), "\(text)")
        }
        for text in [String(hex.dropLast(2)), hex + "ab", String(hex.dropLast()) + "g", "sha1:" + hex] {
            #expect(throws: DiscoveryError.self) { try ElectrumOptions(fingerprint: text).fingerprintBytes() }
        }
        #expect(throws: DiscoveryError.self) { try ElectrumOptions(keepAlive: 0).validate() }
    }

    @Test("Script hashes follow the protocol's own example (the genesis block's P2PKH address)")
    func scriptHash() throws {
        let source = try ElectrumUsageSource(server: "tcp://127.0.0.1:1", coin: .bitcoin)
        #expect(try source.scriptHash("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
            == "8b01df4e368ea28f8dc0423bcf7a4923e3a12d307c875e47a0cfbf90b5c39161")
        #expect(throws: DiscoveryError.self) { try source.scriptHash("0x52908400098527886E0F7030069857D2E4169EE7") }
        #expect(throws: DiscoveryError.self) { try ElectrumUsageSource(server: "tcp://127.0.0.1:1", coin: .ethereum) }
        #expect(throws: DiscoveryError.self) {
            try ElectrumUsageSource(server: "tcp://127.0.0.1:1", coin: .bitcoin, electrum: ElectrumOptions(fingerprint: String(repeating: "00", count: 32)))
        }
    }

    @Test("get_history answers: a list (1.4) or {history} (1.5+); entries must be {tx_hash, height}")
    func histories() throws {
        let entry = JSONValue.object([.init("tx_hash", .string(String(repeating: "0f", count: 32))), .init("height", .number("-1"))])
        #expect(try ElectrumUsageSource.isUsed(.result(.array([])), address: "a") == false)
        #expect(try ElectrumUsageSource.isUsed(.result(.array([entry])), address: "a"))
        #expect(try ElectrumUsageSource.isUsed(.result(.object([.init("history", .array([entry]))])), address: "a"))
        for bad: JSONValue in [.null, .string("[]"), .array([.number("1")]),
                               .array([.object([.init("tx_hash", .string("zz")), .init("height", .number("1"))])]),
                               .array([.object([.init("tx_hash", .string(String(repeating: "0f", count: 32)))])])] {
            #expect(throws: ElectrumFailure.self) { try ElectrumUsageSource.isUsed(.result(bad), address: "a") }
        }
        func failure(_ code: Int) -> ElectrumFailure? {
            let error = JSONValue.object([.init("code", .number(String(code))), .init("message", .string("no"))])
            do { _ = try ElectrumUsageSource.isUsed(.error(error), address: "bc1qx"); return nil } catch { return error as? ElectrumFailure }
        }
        #expect(failure(-102)?.retryable == true && failure(-101)?.retryable == true)
        #expect(failure(1)?.retryable == false)
        #expect(failure(1)?.detail == "blockchain.scripthash.get_history for bc1qx: error 1: no")
    }

    @Test("Server text is shown with control characters escaped and cut when long")
    func shownText() {
        #expect(ElectrumText.shown("bad\u{1B}[31mred\u{07}\n\u{9B}") == "bad\\x1b[31mred\\x07\\x0a\\x9b")
        #expect(ElectrumText.shown(String(repeating: "x", count: 10), limit: 4) == "xxxx…")
    }
}
