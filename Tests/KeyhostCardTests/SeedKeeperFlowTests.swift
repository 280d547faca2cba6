import Testing
import KeyhostCrypto
@testable import KeyhostCard

let seedKeeperPIN = SecretBytes(Array("1234".utf8))
let seedKeeperPUK = SecretBytes(Array("87654321".utf8))
let seedKeeperMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

/// A fresh soft SeedKeeper and a client, both with seeded randomness.
func makeSeedKeeper(seed: String = "seedkeeper", memorySize: Int = 0xFFF) throws -> (card: SoftSeedKeeper, client: SeedKeeperCommandSet) {
    let card = try SoftSeedKeeper(options: SoftSeedKeeperOptions(randomSeed: Array(seed.utf8), memorySize: memorySize))
    return (card, SeedKeeperCommandSet(channel: card, random: SeededRandom(seed: "client-" + seed)))
}

/// SELECT, SETUP, VERIFY PIN.
func makeReadySeedKeeper(seed: String = "seedkeeper", memorySize: Int = 0xFFF) throws -> (card: SoftSeedKeeper, client: SeedKeeperCommandSet) {
    let pair = try makeSeedKeeper(seed: seed, memorySize: memorySize)
    try pair.client.select()
    try pair.client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK, pinTries: 3, pukTries: 2)
    try pair.client.session.verifyPIN(seedKeeperPIN)
    return pair
}

/// Fingerprints computed here from the bytes, as pysatochip does (SHA-256, first 4 bytes), not asked of the card.
func sha256Fingerprint(_ bytes: [UInt8]) -> String { Hex.encode(Hash.sha256(bytes).prefix(4)) }

/// The client against the software card through every flow.
@Suite struct SeedKeeperFlowTests {
    @Test func statusBeforeAndAfterSetup() throws {
        let pair = try makeSeedKeeper()
        let before = try pair.client.select()
        #expect(before.version == "0.2-0.1")
        #expect(!before.isSetupDone && before.needsSecureChannel)
        #expect(throws: SeedKeeperError.setupNotDone(.getSeedKeeperStatus)) { try pair.client.seedKeeperStatus() }
        try pair.client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK, pinTries: 4, pukTries: 2)
        let after = try pair.client.session.getStatus()
        #expect(after.isSetupDone && after.pinTriesLeft == 4 && after.pukTriesLeft == 2)
        #expect(throws: SeedKeeperError.pinRequired(.getSeedKeeperStatus)) { try pair.client.seedKeeperStatus() }
        #expect(throws: SeedKeeperError.pinRequired(.listSecretHeaders)) { try pair.client.listSecretHeaders() }
        try pair.client.session.verifyPIN(seedKeeperPIN)
        let status = try pair.client.seedKeeperStatus()
        #expect(status.secretCount == 0 && status.totalMemory == 0xFFF && status.freeMemory == 0xFFF - 2)
        #expect(try pair.client.listSecretHeaders().isEmpty)
    }

    @Test func importListAndExportAMnemonicAndAPassword() throws {
        let pair = try makeReadySeedKeeper()
        let mnemonic = try SeedKeeperSecretEncoding.bip39Mnemonic(SecretBytes(Array(seedKeeperMnemonic.utf8)))
        let password = try SeedKeeperSecretEncoding.password(SecretBytes(Array("correct horse".utf8)))
        #expect(mnemonic.revealedBytes() == [UInt8(seedKeeperMnemonic.utf8.count)] + Array(seedKeeperMnemonic.utf8) + [0])
        let m = try pair.client.importSecret(mnemonic, type: .bip39Mnemonic, exportRights: .plainAllowed, label: "main wallet")
        let p = try pair.client.importSecret(password, type: .password, exportRights: .plainAllowed, label: "mail")
        #expect((m.id, p.id) == (0, 1))
        #expect(Hex.encode(m.fingerprint) == sha256Fingerprint(mnemonic.revealedBytes()))
        #expect(Hex.encode(p.fingerprint) == sha256Fingerprint(password.revealedBytes()))

        let headers = try pair.client.listSecretHeaders()
        #expect(headers.map(\.id) == [1, 0])  // newest first, as the applet's object list
        #expect(headers.map(\.type) == [.password, .bip39Mnemonic])
        #expect(headers.map(\.labelText) == ["mail", "main wallet"])
        #expect(headers.map(\.origin) == [SeedKeeperOrigin.plainImport.rawValue, SeedKeeperOrigin.plainImport.rawValue])
        #expect(headers[1].fingerprintHex == sha256Fingerprint(mnemonic.revealedBytes()))
        #expect(headers.allSatisfy { $0.plainExports == 0 && $0.exportRights == .plainAllowed })

        let exported = try pair.client.exportSecret(id: m.id)
        #expect(exported.secret.revealedBytes() == mnemonic.revealedBytes())
        #expect(exported.header.plainExports == 1)  // counted before the header is sent and signed
        #expect(try pair.client.exportSecret(id: p.id).secret.revealedBytes() == password.revealedBytes())
        #expect(try pair.client.listSecretHeaders().map(\.plainExports) == [1, 1])
        let status = try pair.client.seedKeeperStatus()
        #expect(status.secretCount == 2)
        // Each object: 13-byte header, label, the secret padded to AES blocks; 10 bytes of bookkeeping.
        let used = (13 + 11 + 96 + 10) + (13 + 4 + 16 + 10)
        #expect(status.freeMemory == 0xFFF - 2 - used)
    }

    @Test(arguments: [0, 1, 15, 16, 127, 128, 129, 300, 1000])
    func secretsOfEverySizeRoundTripInChunks(size: Int) throws {
        let pair = try makeReadySeedKeeper(seed: "size-\(size)")
        let bytes = SeededRandom(seed: "secret-\(size)").bytes(size)
        let imported = try pair.client.importSecret(SecretBytes(bytes), type: .data, exportRights: .plainAllowed, label: "")
        #expect(Hex.encode(imported.fingerprint) == sha256Fingerprint(bytes))
        #expect(try pair.client.exportSecret(id: imported.id).secret.revealedBytes() == bytes)
    }

    @Test func exportRightsAreEnforced() throws {
        let pair = try makeReadySeedKeeper()
        let forbidden = try pair.client.importSecret(SecretBytes([1, 2, 3]), type: .key, exportRights: .forbidden, label: "never")
        let secure = try pair.client.importSecret(SecretBytes([4, 5, 6]), type: .key, exportRights: .encryptedOnly, label: "secure")
        #expect(throws: SeedKeeperError.exportNotAllowed(id: forbidden.id)) { try pair.client.exportSecret(id: forbidden.id) }
        #expect(throws: SeedKeeperError.exportNotAllowed(id: secure.id)) { try pair.client.exportSecret(id: secure.id) }
        #expect(try pair.client.listSecretHeaders().map(\.plainExports) == [0, 0])
        #expect(throws: SeedKeeperError.secretNotFound(id: 42)) { try pair.client.exportSecret(id: 42) }
        #expect(SeedKeeperError.exportNotAllowed(id: 1).kind == "export_forbidden")
    }

    @Test func aGeneratedMasterSeedExportsAsSizeAndSeed() throws {
        let pair = try makeReadySeedKeeper()
        #expect(throws: SeedKeeperError.invalidArgument("a master seed is 16 to 64 bytes, not 15")) {
            try pair.client.generateMasterSeed(size: 15, exportRights: .plainAllowed, label: "x")
        }
        let generated = try pair.client.generateMasterSeed(size: 32, exportRights: .plainAllowed, label: "on card")
        let header = try #require(try pair.client.listSecretHeaders().first)
        #expect(header.type == .masterSeed && header.origin == SeedKeeperOrigin.generatedOnCard.rawValue && header.labelText == "on card")
        let exported = try pair.client.exportSecret(id: generated.id)
        let bytes = exported.secret.revealedBytes()
        #expect(bytes.count == 33 && bytes[0] == 32)
        #expect(Hex.encode(generated.fingerprint) == sha256Fingerprint(bytes))
        #expect(try SeedKeeperSecretEncoding.masterSeed(exported.secret).revealedBytes() == Array(bytes.dropFirst()))
        // Two cards with different randomness draw different seeds.
        let other = try makeReadySeedKeeper(seed: "other")
        let second = try other.client.generateMasterSeed(size: 32, exportRights: .plainAllowed, label: "")
        #expect(second.fingerprint != generated.fingerprint)
    }

    /// BIP32 test vectors 1 and 2: a master seed secret derives on the card the keys BIP32 publishes.
    @Test(arguments: [
        ("000102030405060708090a0b0c0d0e0f", "m/0'/1",
         "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"),
        ("fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542",
         "m/0",
         "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH"),
    ])
    func aMasterSeedSecretDerivesTheBIP32Vectors(_ vector: (String, String, String)) throws {
        let pair = try makeReadySeedKeeper()
        let seed = hex(vector.0)
        let id = try pair.client.importSecret(SecretBytes([UInt8(seed.count)] + seed), type: .masterSeed, exportRights: .plainAllowed, label: "").id
        let key = try pair.client.extendedKey(seedID: id, at: try DerivationPath(vector.1))
        let expected = try HDNode(extendedKey: vector.2)
        #expect(key.publicKey == expected.publicKey && key.chainCode == expected.chainCode)
        #expect(try pair.client.listSecretHeaders()[0].exportCounter == 1)
        // Only a master seed, and only one its export rights let out, is derived.
        let password = try pair.client.importSecret(SecretBytes([1, 65]), type: .password, exportRights: .plainAllowed, label: "").id
        #expect(throws: SeedKeeperError.wrongSecretType(.getExtendedKey)) { try pair.client.extendedKey(seedID: password, at: try DerivationPath("m")) }
        let locked = try pair.client.importSecret(SecretBytes([UInt8(seed.count)] + seed), type: .masterSeed, exportRights: .forbidden, label: "").id
        #expect(throws: SeedKeeperError.exportNotAllowed(id: locked)) { try pair.client.extendedKey(seedID: locked, at: try DerivationPath("m")) }
        #expect(throws: SeedKeeperError.secretNotFound(id: 99)) { try pair.client.extendedKey(seedID: 99, at: try DerivationPath("m")) }
    }

    @Test func resetSecretFreesItsMemoryAndItsId() throws {
        let pair = try makeReadySeedKeeper()
        let free = try pair.client.seedKeeperStatus().freeMemory
        let a = try pair.client.importSecret(SecretBytes([1]), type: .data, exportRights: .plainAllowed, label: "a")
        try pair.client.resetSecret(id: a.id)
        #expect(try pair.client.seedKeeperStatus().freeMemory == free)
        #expect(try pair.client.listSecretHeaders().isEmpty)
        #expect(throws: SeedKeeperError.secretNotFound(id: a.id)) { try pair.client.exportSecret(id: a.id) }
        #expect(throws: SeedKeeperError.secretNotFound(id: a.id)) { try pair.client.resetSecret(id: a.id) }
        // Ids keep counting up; they are not reused.
        #expect(try pair.client.importSecret(SecretBytes([2]), type: .data, exportRights: .plainAllowed, label: "b").id == a.id + 1)
    }

    @Test func aFullMemoryRefusesTheImport() throws {
        let pair = try makeReadySeedKeeper(memorySize: 300)
        let big = SecretBytes([UInt8](repeating: 7, count: 200))
        let first = try pair.client.importSecret(big, type: .data, exportRights: .plainAllowed, label: "")
        #expect(throws: SeedKeeperError.noMemoryLeft(.importSecret)) {
            try pair.client.importSecret(big, type: .data, exportRights: .plainAllowed, label: "")
        }
        #expect(throws: SeedKeeperError.noMemoryLeft(.generateMasterSeed)) {
            try pair.client.generateMasterSeed(size: 64, exportRights: .plainAllowed, label: String(repeating: "l", count: 100))
        }
        #expect(try pair.client.listSecretHeaders().map(\.id) == [first.id])
    }

    @Test func anotherCommandInsideAnImportBreaksTheLock() throws {
        let pair = try makeReadySeedKeeper()
        let header: [UInt8] = [0xC0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10]
        let start = try pair.client.session.exchange(0xA1, p1: 0x01, p2: 0x01, data: header)
        #expect(start.statusWord == .success)
        #expect(throws: SeedKeeperError.lockError(.listSecretHeaders)) { try pair.client.listSecretHeaders() }
        // The lock is gone: the import's next step is refused, and the card works again.
        let next = try pair.client.session.exchange(0xA1, p1: 0x01, p2: 0x03, data: [0, 1, 9])
        #expect(next.statusWord == StatusWord(0x9C30))
        #expect(try pair.client.importSecret(SecretBytes([9]), type: .data, exportRights: .plainAllowed, label: "").fingerprint
                == Array(Hash.sha256([9]).prefix(4)))
    }

    @Test func powerLossEndsTheSessionButNotAnInterruptedImportsLock() throws {
        let pair = try makeReadySeedKeeper()
        let header: [UInt8] = [0xC0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10]
        #expect(try pair.client.session.exchange(0xA1, p1: 0x01, p2: 0x01, data: header).statusWord == .success)
        pair.card.powerCycle()
        try pair.client.select()
        // The applet's lock is persistent: the first command after power loss, whatever it is, breaks it (9C30).
        #expect(throws: SatochipError.status(StatusWord(0x9C30), .verifyPIN)) { try pair.client.session.verifyPIN(seedKeeperPIN) }
        try pair.client.session.verifyPIN(seedKeeperPIN)
        // The half-made object stays, as on the card: listed with no fingerprint, its export refused by the client.
        let headers = try pair.client.listSecretHeaders()
        #expect(headers.count == 1 && headers[0].fingerprint == [0, 0, 0, 0])
        #expect(throws: SeedKeeperError.self) { try pair.client.exportSecret(id: headers[0].id) }
        pair.card.powerCycle()
        try pair.client.select()
        #expect(throws: SeedKeeperError.pinRequired(.listSecretHeaders)) { try pair.client.listSecretHeaders() }
    }

    @Test func aUTF8LabelRoundTripsAndAnOversizedOneIsRefused() throws {
        let pair = try makeReadySeedKeeper()
        let id = try pair.client.importSecret(SecretBytes([1]), type: .data, exportRights: .plainAllowed, label: "wallet ✓").id
        #expect(try pair.client.exportSecret(id: id).header.labelText == "wallet ✓")
        #expect(throws: SeedKeeperError.invalidArgument("a secret label is at most 127 bytes of UTF-8, this one has 128")) {
            try pair.client.importSecret(SecretBytes([1]), type: .data, exportRights: .plainAllowed, label: String(repeating: "x", count: 128))
        }
    }

    @Test func wrongPINCountsDownAndAnExhaustedPUKResetsTheCard() throws {
        let pair = try makeReadySeedKeeper()
        _ = try pair.client.importSecret(SecretBytes([1, 2, 3]), type: .data, exportRights: .plainAllowed, label: "gone soon")
        let wrong = SecretBytes(Array("0000".utf8))
        #expect(throws: SatochipError.wrongPIN(triesLeft: 2)) { try pair.client.session.verifyPIN(wrong) }
        #expect(throws: SeedKeeperError.pinRequired(.listSecretHeaders)) { try pair.client.listSecretHeaders() }
        #expect(throws: SatochipError.wrongPIN(triesLeft: 1)) { try pair.client.session.verifyPIN(wrong) }
        #expect(throws: SatochipError.pinBlocked) { try pair.client.session.verifyPIN(wrong) }
        #expect(throws: SatochipError.pinBlocked) { try pair.client.session.verifyPIN(seedKeeperPIN) }
        #expect(throws: SatochipError.wrongPUK(triesLeft: 1)) { try pair.client.session.unblockPIN(puk: SecretBytes(Array("11111111".utf8))) }
        try pair.client.session.unblockPIN(puk: seedKeeperPUK)
        try pair.client.session.verifyPIN(seedKeeperPIN)
        #expect(try pair.client.listSecretHeaders().count == 1)
        for _ in 0..<3 { _ = try? pair.client.session.verifyPIN(wrong) }
        #expect(throws: SatochipError.wrongPUK(triesLeft: 1)) { try pair.client.session.unblockPIN(puk: SecretBytes(Array("11111111".utf8))) }
        // The last PUK try: the applet resets to factory (secrets and setup gone) and answers FF00.
        #expect(throws: SatochipError.status(StatusWord(0xFF00), .unblockPIN)) {
            try pair.client.session.unblockPIN(puk: SecretBytes(Array("11111111".utf8)))
        }
        #expect(pair.card.state.secrets.isEmpty && !pair.card.state.setupDone)
        #expect(try pair.client.session.getStatus().isSetupDone == false)
        // SETUP again: the PIN and PUK try limits of the first SETUP stay (the applet keeps its OwnerPIN objects).
        try pair.client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK, pinTries: 9, pukTries: 9)
        let status = try pair.client.session.getStatus()
        #expect(status.pinTriesLeft == 3 && status.pukTriesLeft == 2)
    }

    @Test func theLogRecordsOperationsNewestFirst() throws {
        let pair = try makeReadySeedKeeper()
        _ = try? pair.client.session.verifyPIN(SecretBytes(Array("0000".utf8)))
        try pair.client.session.verifyPIN(seedKeeperPIN)
        let seed = try pair.client.generateMasterSeed(size: 16, exportRights: .plainAllowed, label: "")
        _ = try pair.client.exportSecret(id: seed.id)
        #expect(throws: SeedKeeperError.secretNotFound(id: 7)) { try pair.client.resetSecret(id: 7) }
        let logs = try pair.client.logs()
        #expect(logs.total == 4 && logs.available == 100)
        #expect(logs.entries == [
            SeedKeeperLogEntry(instruction: 0xA5, id1: 7, id2: 0xFFFF, result: 0x9C08),
            SeedKeeperLogEntry(instruction: 0xA2, id1: seed.id, id2: 0xFFFF, result: 0x9000),
            SeedKeeperLogEntry(instruction: 0xA0, id1: seed.id, id2: 0xFFFF, result: 0x9000),
            SeedKeeperLogEntry(instruction: 0x42, id1: 0xFFFF, id2: 0xFFFF, result: 0x63C2),
        ])
        #expect(try pair.client.seedKeeperStatus().lastLog == logs.entries[0])
    }

    @Test func authenticityWithItsOwnTestCA() throws {
        let pair = try makeSeedKeeper()
        let serial = try pair.client.session.readSerial()
        try pair.client.select()
        try pair.client.session.setup(pin: seedKeeperPIN, puk: seedKeeperPUK)
        try pair.client.session.verifyPIN(seedKeeperPIN)
        let proof = try pair.client.session.verifyAuthenticity(caKeys: [SoftSeedKeeper.testCAKey().publicKey], serial: serial)
        let authentikey = try pair.client.session.getAuthentikey()
        #expect(proof.deviceKey == authentikey)
        #expect(throws: SatochipError.self) { try pair.client.session.verifyAuthenticity(caKeys: [SoftSatochip.testCAKey().publicKey]) }
    }

    @Test func selectingAnotherAppletIsRefused() throws {
        let satochip = try SoftSatochip(options: SoftSatochipOptions(randomSeed: Array("s".utf8)))
        #expect(throws: SeedKeeperError.notSeedKeeper(StatusWord(0x6A82))) { try SeedKeeperCommandSet(channel: satochip).select() }
        let seedKeeper = try SoftSeedKeeper(options: SoftSeedKeeperOptions(randomSeed: Array("s".utf8)))
        #expect(throws: SatochipError.notSatochip(StatusWord(0x6A82))) { try SatochipCommandSet(channel: seedKeeper).select() }
    }
}
