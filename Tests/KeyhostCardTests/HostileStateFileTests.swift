import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// A state file is input: whatever it holds, loading it is a `corruptState` error naming the file and
/// the field, never a card that traps on its first answer (a fuzzer found pinLimit 65536, pukTries
/// 65536 or -1, and 100 000-byte keyUID or certificate values crashing `keyhost card status`).
@Suite struct HostileStateFileTests {
    /// An initialised card with a key, saved to a file, as JSON the tests edit.
    static func savedState(_ version: AppletVersion) throws -> (url: URL, json: [String: Any]) {
        let url = try temporaryDirectory().appendingPathComponent("card.json")
        let soft = try SoftKeycard(store: SoftKeycardStore(url: url), options: SoftKeycardOptions(appletVersion: version, randomSeed: Array("hostile".utf8)))
        let card = KeycardCommandSet(channel: soft, trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        try card.select()
        try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: version.major < 4 ? PairingSecret.derive(password: testPairingPassword) : nil)
        let (session, _) = try KeycardSession.open(channel: soft, pin: testPIN, pairingPassword: testPairingPassword,
                                                   trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        _ = try session.loadKey(seed: testMnemonic.seed())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return (url, json)
    }

    /// Writes `json` with `edit` applied and returns what loading it says (nil: it loaded).
    static func loadError(_ url: URL, _ json: [String: Any], _ edit: (inout [String: Any]) -> Void) throws -> String? {
        var edited = json
        edit(&edited)
        try JSONSerialization.data(withJSONObject: edited).write(to: url)
        do {
            _ = try SoftKeycard(store: SoftKeycardStore(url: url))
            return nil
        } catch let error as SoftKeycardError {
            return error.description
        }
    }

    static func credentials(_ json: inout [String: Any], _ key: String, _ value: Any) {
        var credentials = json["credentials"] as? [String: Any] ?? [:]
        credentials[key] = value
        json["credentials"] = credentials
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func namedFieldsAreRefusedWithTheFileAndTheField(_ version: AppletVersion) throws {
        let (url, json) = try Self.savedState(version)
        let cases: [(field: String, edit: (inout [String: Any]) -> Void)] = [
            ("credentials.pinLimit", { Self.credentials(&$0, "pinLimit", 65536) }),
            ("credentials.pukTries", { Self.credentials(&$0, "pukTries", 65536) }),
            ("credentials.pukTries", { Self.credentials(&$0, "pukTries", -1) }),
            ("credentials.pinTries", { Self.credentials(&$0, "pinTries", 4) }),
            ("keyUID", { $0["keyUID"] = Array(repeating: 7, count: 100_000) }),
            ("certificate", { $0["certificate"] = Array(repeating: 7, count: 100_000) }),
            ("pairingKeys", { $0["pairingKeys"] = Array(repeating: NSNull(), count: 300) }),
            ("publicData", { $0["publicData"] = Array(repeating: 1, count: 128) }),
            ("cashData", { $0["cashData"] = Array(repeating: 1, count: 128) }),
            ("ndefFile", { $0["ndefFile"] = Array(repeating: 1, count: 513) }),
            ("keyPath", { $0["keyPath"] = Array(repeating: 0, count: 11) }),
            ("credentials.pin", { Self.credentials(&$0, "pin", "12345x") }),
        ]
        for (field, edit) in cases {
            let message = try #require(try Self.loadError(url, json, edit), "\(field) loaded")
            #expect(message.hasPrefix("soft keycard state \(url.path) is unreadable: field '\(field)' "), "\(message)")
        }
        #expect(try Self.loadError(url, json, { _ in }) == nil)
    }

    /// The card itself, should a state be built in memory past the file's checks, answers 6F00 instead of trapping.
    @Test func outOfRangeCountersAnswerAnErrorNotATrap() throws {
        let pair = try makeReadyCard(.v3_2)
        pair.soft.state.credentials?.pukTries = 65536
        #expect(throws: (any Error).self) { try pair.client.getStatus() }
        pair.soft.state.credentials?.pukTries = 5
        pair.soft.state.keyUID = Array(repeating: 1, count: 100_000)
        #expect(throws: (any Error).self) { try pair.client.select() }
    }
}
