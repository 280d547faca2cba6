import KeyhostDiscovery
import KeyhostServices
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The job request both front ends build (`keyhost discover --jobs`, Lua's `discovery.scan_jobs`), driven in process:
/// what it finds is checked against BIP84's published vectors, and its refusals in each front end's spelling.
@Suite struct DiscoveryJobRequestTests {
    // BIP84's test vectors (mnemonic "abandon … about", account m/84'/0'/0'): the account's zpub, its second
    // receive address (m/84'/0'/0'/0/1) and its first change address (m/84'/0'/0'/1/0).
    static let zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
    static let secondReceive = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
    static let firstChange = "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"

    static let cli: (String) -> String = { "--" + $0.replacing("_", with: "-") }
    static let lua: (String) -> String = { "option '\($0)'" }

    func file(_ text: String) throws -> String {
        var template = Array("/tmp/keyhost-services-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let bytes = Array(text.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        close(fd)
        return String(cString: template)
    }

    func jobLine(_ id: String) -> [UInt8] { Array("{\"id\": \"\(id)\", \"xpub\": \"\(Self.zpub)\"}\n".utf8) }

    @Test func aJobFindsWhatTheVectorsSayIsUsed() throws {
        let index = try file("\(Self.secondReceive)\n\(Self.firstChange)\n")
        defer { unlink(index) }
        var request = DiscoveryJobRequest(source: "index:\(index)")
        request.gapLimit = 3
        let job = try request.job(lines: jobLine("alice") + jobLine("bob"), name: "jobs.jsonl", spell: Self.cli)
        #expect(job.concurrency == DiscoveryJobRequest.defaultWalletsAtOnce)
        var found: [String: Set<String>] = [:]
        try job.run { _, wallet, outcome in
            guard case .finished(let result, resumed: false) = outcome else { Issue.record("\(wallet.id): \(outcome)"); return }
            found[wallet.id] = Set(result.usedAddresses.map(\.address))
            #expect(result.usedAddresses.map(\.path).sorted() == ["m/84'/0'/0'/0/1", "m/84'/0'/0'/1/0"])
        }
        #expect(found == ["alice": [Self.secondReceive, Self.firstChange], "bob": [Self.secondReceive, Self.firstChange]])
    }

    @Test(arguments: [("cli", "--gap-limit"), ("lua", "option 'gap_limit'")])
    func aBadValueIsRefusedInTheCallersWords(front: String, spelled: String) throws {
        var request = DiscoveryJobRequest(source: "index:/nonexistent")
        request.gapLimit = 0
        let error = #expect(throws: DiscoverySetupError.self) {
            try request.job(lines: jobLine("alice"), name: "jobs.jsonl", spell: front == "cli" ? Self.cli : Self.lua)
        }
        #expect(error?.description.hasPrefix("\(spelled) must be at least 1, got 0") == true, "\(error.map { "\($0)" } ?? "")")
    }

    @Test func aLuaSourceAndAMisplacedPinAreRefusedBeforeAnythingIsAsked() throws {
        let lua = #expect(throws: DiscoverySetupError.self) {
            try DiscoveryJobRequest(source: "lua:usage.lua").job(lines: jobLine("a"), name: "j", spell: Self.lua)
        }
        #expect(lua?.description.contains("option 'source': a lua: source cannot serve a job's wallets at once") == true)
        var pinned = DiscoveryJobRequest(source: "esplora:http://127.0.0.1:1")
        pinned.electrum.fingerprint = String(repeating: "00", count: 32)
        let pin = #expect(throws: DiscoverySetupError.self) { try pinned.job(lines: jobLine("a"), name: "j", spell: Self.cli) }
        #expect(pin?.description.hasPrefix("--electrum-fingerprint goes with an Electrum source") == true, "\(pin.map { "\($0)" } ?? "")")
    }
}
