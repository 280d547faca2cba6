import Foundation
import Testing
import KeyhostCard
import KeyhostCrypto
import LuaRuntime
import KeyhostBindings
@testable import KeyhostServices

/// The pairing store's file handling and the APDU trace's redaction, below the Lua layer.
@Suite struct PairingStoreTests {
    func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-bindings-\(UUID().uuidString)").path
        return path
    }

    @Test func savesLooksUpAndRemovesWithPrivateModes() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/state/keyhost/pairings.json"
        let store = PairingStore(.file(path))
        let uid: [UInt8] = Array(0..<16)
        #expect(try store.lookup(uid: uid) == nil)
        let pairing = try Pairing(index: 3, key: [UInt8](repeating: 0xAB, count: 32))
        try store.save(uid: uid, pairing: pairing, applet: "3.2")
        #expect(try store.lookup(uid: uid) == pairing)
        #expect(try PairingStore(.file(path)).lookup(uid: uid) == pairing, "read back by a new store")

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder + "/state/keyhost")
        #expect((folderAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder + "/state/keyhost").filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty)

        try store.save(uid: [9, 9], pairing: try Pairing(index: 1, key: [UInt8](repeating: 1, count: 32)), applet: "3.2")
        try store.remove(uid: uid)
        #expect(try store.lookup(uid: uid) == nil)
        #expect(try store.lookup(uid: [9, 9])?.index == 1)
    }

    @Test func corruptFileIsReportedNotOverwritten() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/pairings.json"
        try "{ not json".write(toFile: path, atomically: true, encoding: .utf8)
        let store = PairingStore(.file(path))
        #expect(throws: CardServiceError.self) { try store.lookup(uid: [1]) }
        #expect(throws: CardServiceError.self) { try store.save(uid: [1], pairing: try Pairing(index: 0, key: [UInt8](repeating: 0, count: 32)), applet: nil) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{ not json")
    }

    /// PathText replaced NSString's path operations (PairingStore no longer imports Foundation).
    /// Not "//": NSString makes it "" where PathText says "/"; the store's paths end in /pairings.json.
    @Test(arguments: ["", "/", "/tmp", "/tmp/", "tmp", "a/b", "a//b", "/a/b//", "/a/b/c.json", "./x", "../x/", "/x/state/keyhost"])
    func pathTextMatchesNSString(_ path: String) {
        #expect(PathText.parent(path) == (path as NSString).deletingLastPathComponent, "parent of \(path.debugDescription)")
        #expect(PathText.lastComponent(path) == (path as NSString).lastPathComponent, "last component of \(path.debugDescription)")
    }

    /// paired_at is written as ISO8601DateFormatter wrote it: UTC, whole seconds, "Z".
    @Test func timestampMatchesISO8601DateFormatter() {
        let before = ISO8601DateFormatter().string(from: Date())
        let ours = PairingStore.timestamp()
        let after = ISO8601DateFormatter().string(from: Date())
        #expect(ours == before || ours == after, "\(ours) vs \(before)")
        #expect(ours.utf8.count == 20 && ours.hasSuffix("Z"))
    }

    @Test func defaultPathFollowsXDG() {
        #expect(PairingStore.defaultPath(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"]) == "/x/state/keyhost/pairings.json")
        #expect(PairingStore.defaultPath(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.local/state/keyhost/pairings.json")
        #expect(PairingStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/keyhost/pairings.json")
    }

    @Test func secretInputWithoutTerminalExplainsWhatToDo() throws {
        let saved = SecretInput.terminalPath
        SecretInput.terminalPath = "/nonexistent/tty"
        defer { SecretInput.terminalPath = saved }
        unsetenv("KEYHOST_TEST_SECRET")
        var input = CardFrontEnd.lua.pin
        input.environment = "KEYHOST_TEST_SECRET"
        do {
            _ = try input.resolve(nil)
            Issue.record("expected an error")
        } catch let error as CardServiceError {
            #expect(error.kind == "no_secret")
            #expect(error.description == "no PIN given: pass pin = ..., set KEYHOST_PIN, or run keyhost on a terminal to be asked")
        }
        setenv("KEYHOST_TEST_SECRET", "246810", 1)
        defer { unsetenv("KEYHOST_TEST_SECRET") }
        #expect(try input.resolve(nil).text == "246810")
        #expect(try input.resolve(Array("135791".utf8)).text == "135791")
    }
}

@Suite struct TraceRedactionTests {
    /// A whole session, v1 and v2, traced with plaintext: no PIN, PUK, pairing password, seed or private key shows.
    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func secretsNeverReachTheTrace(_ version: AppletVersion) throws {
        var lines: [String] = []
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: version, randomSeed: [7]))
        let tracer = TracingChannel(soft, showsPlaintext: true) { lines.append($0) }
        let card = KeycardCommandSet(channel: tracer, random: SeededRandom(seed: "t"), trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        card.secureExchangeObserver = { tracer.plaintext(command: $0, response: $1) }
        let pin = "135790", puk = "864209753124", password = "correct horse battery"
        let v1 = version.major < 4
        try card.select()
        try card.initialize(pin: SecretBytes(Array(pin.utf8)), puk: SecretBytes(Array(puk.utf8)), pairingSecret: v1 ? PairingSecret.derive(password: password) : nil)
        try card.select()
        if v1 { try card.pair(password: password) }
        try card.openSecureChannel()
        try card.verifyPIN(SecretBytes(Array(pin.utf8)))
        let seed = [UInt8](repeating: 0x5A, count: 64)
        try card.loadKey(seed: SecretBytes(seed))
        let eip = try card.exportKey(.privateAndPublic, path: KeyPath("m/43'/60'/1581'/0'/0"))
        let privateKey = try #require(eip.privateKey).revealedBytes()
        try card.changePIN(SecretBytes(Array("975310".utf8)))
        let indexes = try card.generateMnemonic(wordCount: 12)
        let text = lines.joined(separator: "\n").uppercased()
        #expect(text.contains("PLAINTEXT >> 80 D2 04 00"))
        #expect(!text.contains(TracingChannel.spaced(indexes.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })), "word indexes")
        #expect(text.contains("; VERIFY PIN"))
        #expect(text.contains("REDACTED"))
        for secret in [pin, puk, "975310"] {
            let hex = TracingChannel.spaced(Array(secret.utf8))
            #expect(!text.contains(hex), "\(secret) as bytes")
        }
        #expect(!text.contains(TracingChannel.spaced(Array(seed.prefix(8)))))
        #expect(!text.contains(TracingChannel.spaced(Array(privateKey.prefix(8)))))
        if v1 {
            let secretBytes = try PairingSecret.derive(password: password).revealedBytes()
            #expect(!text.contains(TracingChannel.spaced(Array(secretBytes.prefix(8)))))
        }
        #expect(lines.contains { $0.hasPrefix("   plaintext >> 80 20 00 00 06 [6 bytes redacted]") })
        #expect(lines.contains { $0.hasPrefix("<< ") && $0.hasSuffix(" ms)") })
    }

    @Test func formatting() {
        let select = CommandAPDU(cla: 0, ins: 0xA4, p1: 4, data: Keycard.instanceAID)
        #expect(TracingChannel.format(command: select) == "00 A4 04 00 09 A0 00 00 08 04 00 01 01 01  ; SELECT")
        #expect(TracingChannel.format(command: CommandAPDU(cla: 0x80, ins: 0x20, data: Array("123456".utf8))) == "80 20 00 00 06 [6 bytes redacted]  ; VERIFY PIN")
        #expect(TracingChannel.format(response: ResponseAPDU(statusWord: StatusWord(0x63C2)), redacted: false) == "63C2  ; verification failed, 2 tries left")
        let export = CommandAPDU(cla: 0x80, ins: 0xC2, p1: 1, p2: 0, data: [0x80, 0, 0, 0x2B])
        #expect(TracingChannel.redactsResponse(to: export))
        #expect(!TracingChannel.redactsResponse(to: CommandAPDU(cla: 0x80, ins: 0xC2, p1: 1, p2: 1)))
    }
}

@Suite struct CardErrorTests {
    @Test func structuredFields() {
        let error = CardServiceError.from(keycard: .wrongPIN(triesLeft: 2), command: nil)
        #expect(error.description == "wrong PIN: 2 tries left (SW 63C2 from VERIFY PIN)")
        #expect(error.luaErrorFields["kind"] == .text("wrong_pin"))
        #expect(error.luaErrorFields["sw"] == .integer(0x63C2))
        #expect(error.luaErrorFields["retries_left"] == .integer(2))
        #expect(error.luaErrorFields["command"] == .text("VERIFY PIN"))
        #expect(CardServiceError.from(keycard: .noFreePairingSlot, command: nil).kind == "no_free_slot")
        #expect(CardServiceError.from(keycard: .status(StatusWord(0x6F00), .sign), command: nil).description
                == "the card answered no precise diagnosis (SW 6F00 from SIGN)")
    }
}

/// 6985 means different things per command; SELECT's must not be explained as a missing PIN.
@Suite struct CardErrorWordingTests {
    @Test func selectWithoutIdentityCertificate() {
        let text = String(describing: CardServiceError.from(KeycardError.conditionsNotSatisfied(.select), command: "SELECT"))
        #expect(text.contains("holds no identity certificate"))
        #expect(!text.contains("PIN"))
    }

    @Test func missingFormsAreNamed() {
        let text = String(describing: CardServiceError.from(
            KeycardError.unsupportedForm(.sign, what: "Schnorr (BIP340) signing; it signs with ECDSA only", applet: "3.2"), command: "SIGN"))
        #expect(text.contains("SIGN on applet 3.2 does not take Schnorr"))
        #expect(!text.contains("is not offered"))
    }
}

/// Reader numbers mean the same reader everywhere: counted from 0 over the real readers, as `keyhost card list` prints.
@Suite struct ReaderNumberTests {
    struct FakeReaders: CardReaderSource {
        let names: [String]
        func readerNames() throws -> [String] { names }
        func connect(reader: String, options: CardConnectOptions) throws -> CardChannel { throw KeycardError.notPaired }
    }

    @Test func numbersCountFromZeroOverRealReaders() throws {
        let list = try CardReaders.readerList([FakeReaders(names: ["Reader A 00 00", "Reader B 00 01"])])
        #expect(list.map(\.name) == ["Reader A 00 00", "Reader B 00 01", "virtual"])
        #expect(CardReaders.reader(number: 0, in: list)?.name == "Reader A 00 00")
        #expect(CardReaders.reader(number: 1, in: list)?.name == "Reader B 00 01")
        #expect(CardReaders.reader(number: 2, in: list) == nil) // the virtual reader has no number
        #expect(CardReaders.reader(number: -1, in: list) == nil)
        #expect(CardReaders.noReaderNumber(2, in: list, readerList: "'keyhost card list'").contains("numbered from 0 as 'keyhost card list' lists them: 0: \"Reader A 00 00\", 1: \"Reader B 00 01\""))
    }
}
