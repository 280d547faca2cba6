import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

@Suite struct PersistenceTests {
    struct SimulatedCrash: Error {}

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func stateSurvivesReload(_ version: AppletVersion) throws {
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("card.json")
        let options = SoftKeycardOptions(appletVersion: version)
        var storedPairing: Pairing?
        var keyUID: [UInt8] = []
        do {
            let soft = try SoftKeycard(store: SoftKeycardStore(url: url), options: options)
            let card = KeycardCommandSet(channel: soft, trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
            try card.select()
            try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: version.major < 4 ? PairingSecret.derive(password: testPairingPassword) : nil)
            let (session, pairing) = try KeycardSession.open(channel: soft, pin: testPIN, pairingPassword: testPairingPassword,
                                                             trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
            storedPairing = pairing
            keyUID = try session.loadKey(seed: testMnemonic.seed())
            try session.deriveKeyIfV1(KeyPath("m/44'/60'/0'/0/3"))
            #expect(throws: KeycardError.wrongPIN(triesLeft: 2)) { try session.verifyPIN("000000") }
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let reloaded = try SoftKeycard(store: SoftKeycardStore(url: url), options: options)
        let (card, _) = try KeycardSession.open(channel: reloaded, pin: nil, pairing: storedPairing,
                                                trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        #expect(card.applicationInfo?.keyUID == keyUID)
        #expect(try card.getStatus().pinRetries == 2)
        try card.verifyPIN(testPIN)
        if version.major < 4 { #expect(try card.getCurrentPath().description == "m/44'/60'/0'/0/3") }
        let master = try HDNode(seed: testMnemonic.seed())
        #expect(try card.exportKey(.publicOnly, path: KeyPath("m/44'/60'/0'/0/0")).publicKey == (try master.derive("m/44'/60'/0'/0/0")).publicKey)
    }

    @Test func crashBeforeRenameKeepsTheOldState() throws {
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("card.json")
        let store = SoftKeycardStore(url: url)
        let soft = try SoftKeycard(store: store, options: SoftKeycardOptions(appletVersion: .v3_2, randomSeed: [9]))
        let card = KeycardCommandSet(channel: soft, random: SeededRandom(seed: "c"))
        try card.select()
        try card.initialize(pin: testPIN, puk: testPUK, pairingSecret: PairingSecret.derive(password: testPairingPassword))
        try card.select()
        try card.pair(password: testPairingPassword)
        try card.openSecureChannel()
        let before = try Data(contentsOf: url)

        // The wrong PIN changes the counter; the process "dies" after writing the temporary file.
        store.beforeRename = { throw SimulatedCrash() }
        #expect(throws: SimulatedCrash.self) { try card.verifyPIN("000000") }
        #expect(FileManager.default.fileExists(atPath: url.path + ".tmp"))
        #expect(try Data(contentsOf: url) == before)
        let survivor = try #require(try store.load())
        #expect(survivor.credentials?.pinTries == 3)

        // A torn (truncated) temporary file next to the state is ignored, and the next save replaces it.
        let tmp = url.path + ".tmp"
        let torn = try Data(contentsOf: URL(fileURLWithPath: tmp)).prefix(40)
        try torn.write(to: URL(fileURLWithPath: tmp))
        let reloaded = try SoftKeycard(store: SoftKeycardStore(url: url))
        #expect(reloaded.state.credentials?.pinTries == 3)
        #expect(reloaded.state == survivor)
        store.beforeRename = nil
        let again = KeycardCommandSet(channel: reloaded)
        again.pairing = card.pairing
        try again.select()
        try again.openSecureChannel()
        #expect(throws: KeycardError.wrongPIN(triesLeft: 2)) { try again.verifyPIN("000000") }
        #expect(!FileManager.default.fileExists(atPath: tmp))
        #expect(try SoftKeycardStore(url: url).load()?.credentials?.pinTries == 2)
    }

    @Test func truncatedStateFileIsReportedNotReset() throws {
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("card.json")
        _ = try SoftKeycard(store: SoftKeycardStore(url: url))
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        #expect(throws: SoftKeycardError.self) { try SoftKeycard(store: SoftKeycardStore(url: url)) }
    }

    @Test func unreadableStateSaysWhyInASentence() throws {
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("card.json")
        try Data("{\"version\": \"three\"}".utf8).write(to: url)
        let wrongType = try #require(throwing(try SoftKeycardStore(url: url).load()))
        #expect(wrongType.hasPrefix("soft keycard state \(url.path) is unreadable: "), "\(wrongType)")
        #expect(!wrongType.contains("DecodingError") && !wrongType.contains("Context("), "\(wrongType)")
        let endless = try #require(throwing(try SoftKeycardStore(url: URL(fileURLWithPath: "/dev/zero")).load()))
        // A device is refused for what it is, before anything is read from it.
        #expect(endless == "soft keycard state /dev/zero is unreadable: is a character device, not a regular file: name a file (or a path where none exists yet) for keyhost to keep it in")
    }

    /// The text of the error `body` throws, or nil.
    private func throwing<T>(_ body: @autoclosure () throws -> T) -> String? {
        do { _ = try body(); return nil } catch { return "\(error)" }
    }
}

extension KeycardCommandSet {
    func deriveKeyIfV1(_ path: KeyPath) throws {
        if applicationInfo?.secureChannelVersion == .v1 { try deriveKey(path) }
    }
}
