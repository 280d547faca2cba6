import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The soft SeedKeeper's state file: written 0600, read back whole (secrets, PIN counters, log), and refused with
/// the file and the field named when it holds what the applet could never have written.
@Suite struct SeedKeeperStateFileTests {
    static func savedCard() throws -> (url: URL, json: [String: Any]) {
        let url = try temporaryDirectory().appendingPathComponent("seedkeeper.json")
        let card = try SoftSeedKeeper(store: SoftSeedKeeperStore(url: url), options: SoftSeedKeeperOptions(randomSeed: Array("file".utf8)))
        let client = SeedKeeperCommandSet(channel: card, random: SeededRandom(seed: "client"))
        try client.select()
        try client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK)
        try client.session.verifyPIN(seedKeeperPIN)
        try client.importSecret(SecretBytes(Array("kept".utf8)), type: .password, exportRights: .plainAllowed, label: "saved")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return (url, json)
    }

    @Test func savedPrivatelyAndReadBack() throws {
        let (url, _) = try Self.savedCard()
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let card = try SoftSeedKeeper(store: SoftSeedKeeperStore(url: url))
        let client = SeedKeeperCommandSet(channel: card)
        #expect(try client.select().isSetupDone)
        try client.session.verifyPIN(seedKeeperPIN)
        let headers = try client.listSecretHeaders()
        #expect(headers.map(\.labelText) == ["saved"])
        #expect(try client.exportSecret(id: headers[0].id).secret.revealedBytes() == Array("kept".utf8))
        #expect(try client.logs().entries.first?.instruction == 0xA2)
    }

    @Test(arguments: [
        ("authentikey", [1, 2, 3] as Any, "field 'authentikey' has 3 bytes; expected 32"),
        ("pinTries", 9 as Any, "field 'pinTries' is 9; expected 0 to 5"),
        ("memorySize", 100000 as Any, "field 'memorySize' is 100000"),
        ("logs", [1, 2] as Any, "field 'logs' has 2 bytes; expected 700"),
        ("logHead", 3 as Any, "field 'logHead' is 3"),
        ("secrets", [["id": 0, "header": [1, 2], "secret": [], "size": 20]] as Any, "field 'secrets[0]' has a header of 2 bytes"),
        ("secrets", [["id": 0, "header": [UInt8](repeating: 0, count: 13), "secret": [], "size": 9000]] as Any, "field 'secrets[0]' has size 9000"),
        ("secrets", [["id": 1, "header": [UInt8](repeating: 0, count: 13), "secret": [], "size": 20],
                     ["id": 1, "header": [UInt8](repeating: 0, count: 13), "secret": [], "size": 20]] as Any, "field 'secrets[1]' has id 1"),
    ])
    func hostileFieldsAreRefused(_ edit: (String, Any, String)) throws {
        let (url, json) = try Self.savedCard()
        var edited = json
        edited[edit.0] = edit.1
        try JSONSerialization.data(withJSONObject: edited).write(to: url)
        do {
            _ = try SoftSeedKeeper(store: SoftSeedKeeperStore(url: url))
            Issue.record("loaded a state with \(edit.0) = \(edit.1)")
        } catch let error as SoftSeedKeeperError {
            #expect("\(error)".contains(url.path))
            #expect("\(error)".contains(edit.2))
        }
    }

    @Test func notJSONAndTooBigAreRefused() throws {
        let (url, _) = try Self.savedCard()
        try Data("not json".utf8).write(to: url)
        #expect(throws: SoftSeedKeeperError.self) { try SoftSeedKeeper(store: SoftSeedKeeperStore(url: url)) }
        try Data(repeating: 0x20, count: 2 << 20).write(to: url)
        #expect(throws: SoftSeedKeeperError.self) { try SoftSeedKeeper(store: SoftSeedKeeperStore(url: url)) }
    }
}
