import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The soft Satochip's state file: written 0600, read back whole, and refused with the file and the field named
/// when it holds what the applet could never have written.
@Suite struct SatochipStateFileTests {
    static func savedCard() throws -> (url: URL, json: [String: Any]) {
        let url = try temporaryDirectory().appendingPathComponent("satochip.json")
        let card = try SoftSatochip(store: SoftSatochipStore(url: url), options: SoftSatochipOptions(randomSeed: Array("file".utf8)))
        let client = SatochipCommandSet(channel: card, random: SeededRandom(seed: "client"))
        try client.select()
        try client.setup(pin: satochipPIN, puk: satochipPUK)
        try client.verifyPIN(satochipPIN)
        try client.importSeed(SecretBytes([UInt8](repeating: 4, count: 32)))
        try client.setLabel("saved")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return (url, json)
    }

    @Test func savedPrivatelyAndReadBack() throws {
        let (url, _) = try Self.savedCard()
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let card = try SoftSatochip(store: SoftSatochipStore(url: url))
        let client = SatochipCommandSet(channel: card)
        #expect(try client.select().isSeeded)
        try client.verifyPIN(satochipPIN)
        #expect(try client.label() == "saved")
    }

    @Test(arguments: [
        ("authentikey", [1, 2, 3] as Any, "field 'authentikey' has 3 bytes; expected 32"),
        ("pinTries", 9 as Any, "field 'pinTries' is 9; expected 0 to 5"),
        ("pinLimit", 65536 as Any, "field 'pinLimit' is 65536; expected 1 to 127"),
        ("label", [UInt8](repeating: 65, count: 100) as Any, "field 'label' has 100 bytes; at most 64"),
        ("masterChainCode", NSNull() as Any, "field 'masterChainCode' must be set exactly when masterKey is"),
        ("pin", "1234" as Any, "field 'pin'"),
    ])
    func hostileFieldsAreRefused(_ edit: (String, Any, String)) throws {
        let (url, json) = try Self.savedCard()
        var edited = json
        edited[edit.0] = edit.1
        try JSONSerialization.data(withJSONObject: edited).write(to: url)
        do {
            _ = try SoftSatochip(store: SoftSatochipStore(url: url))
            Issue.record("loaded a state with \(edit.0) = \(edit.1)")
        } catch let error as SoftSatochipError {
            #expect("\(error)".contains(url.path))
            #expect("\(error)".contains(edit.2))
        }
    }

    @Test func notJSONAndTooBigAreRefused() throws {
        let (url, _) = try Self.savedCard()
        try Data("not json".utf8).write(to: url)
        #expect(throws: SoftSatochipError.self) { try SoftSatochip(store: SoftSatochipStore(url: url)) }
        try Data(repeating: 0x20, count: 2 << 20).write(to: url)
        #expect(throws: SoftSatochipError.self) { try SoftSatochip(store: SoftSatochipStore(url: url)) }
    }
}
