import KeyhostCrypto

/// Choices for a new soft SeedKeeper.
public struct SoftSeedKeeperOptions: Sendable {
    /// Makes every random byte reproducible (tests only).
    public var randomSeed: [UInt8]?
    /// The CA that signs the device certificate (default: `SoftSeedKeeper.testCAKey()`).
    public var caKey: PrivateKey?
    /// The applet's secret memory in bytes (the install parameter; 0xFFF by default).
    public var memorySize: Int

    public init(randomSeed: [UInt8]? = nil, caKey: PrivateKey? = nil, memorySize: Int = 0xFFF) {
        self.randomSeed = randomSeed
        self.caKey = caKey
        self.memorySize = memorySize
    }
}

/// A software SeedKeeper: the behaviour of the SeedKeeper applet (protocol 0.2, applet 0.1, the public
/// `Toporin/Seedkeeper-Applet` source) as a `CardChannel` peer: status words, PIN counters and the factory reset
/// a blocked PUK triggers, the mandatory secure channel, secrets with their headers, export rights, fingerprints,
/// the object memory's limit, the log, and the authenticity PKI, for tests and scripting without hardware.
///
/// Deliberate differences: ECDSA uses RFC 6979 low-S nonces; secrets are kept in clear in the state file (the
/// applet encrypts them under a card key); memory is counted without fragmentation; the encrypted (secure) import
/// and export, export to a Satochip, random-secret and 2FA generation, master-password
/// derivation, NDEF and NFC policy are not emulated (6D00, or 9C05 for a secure transport mode); the lock of an
/// interrupted import or export lives in memory only (the applet's survives a restart of the state file too).
public final class SoftSeedKeeper: CardChannel {
    public internal(set) var state: SoftSeedKeeperState
    let random: RandomSource
    let store: SoftSeedKeeperStore?
    private var savedState: SoftSeedKeeperState

    // Session (transient) state.
    var selected = false
    var pinVerified = false
    var channel: SoftSatochipChannel?
    /// The multi-step command under way (IMPORT or EXPORT SECRET), as the applet's lock_* fields.
    var lock: Lock?
    /// The listing's position (index in `state.secrets`, counting down) and the log reader's.
    var listCursor: Int?
    var logCursor: Int?

    struct Lock {
        var ins: UInt8
        var lastOp: UInt8
        var id: Int
        /// Import: the bytes received so far and the object's allocated size; export: the secret bytes left.
        var data: [UInt8]
        var allocated: Int
        var exportedSoFar: [UInt8]
    }

    static let cplcLength = 42
    static let protocolVersion: (UInt8, UInt8) = (0, 2)
    static let appletVersion: (UInt8, UInt8) = (0, 1)
    /// Memory an object costs beyond its data: the object header (8) and the allocator's block size (2).
    static let objectOverhead = 10

    /// A fixed test CA (SHA-256 of a label): give its public key to `verifyAuthenticity` to accept soft SeedKeepers.
    public static func testCAKey() -> PrivateKey {
        (try? PrivateKey(bytes: Hash.sha256(Array("keyhost soft seedkeeper test CA".utf8)))) ?? PrivateKey.generate()
    }

    /// An in-memory card.
    public init(options: SoftSeedKeeperOptions = SoftSeedKeeperOptions()) throws {
        random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        store = nil
        state = try SoftSeedKeeper.freshState(options: options, random: random)
        savedState = state
    }

    /// A card kept in `store`: loaded when the file exists, created (and saved) otherwise.
    public init(store: SoftSeedKeeperStore, options: SoftSeedKeeperOptions = SoftSeedKeeperOptions()) throws {
        random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = store
        let fresh: SoftSeedKeeperState
        if let loaded = try store.load() { fresh = loaded } else { fresh = try SoftSeedKeeper.freshState(options: options, random: random) }
        state = fresh
        savedState = fresh
        try store.save(fresh)
    }

    static func freshState(options: SoftSeedKeeperOptions, random: RandomSource) throws -> SoftSeedKeeperState {
        let authentikey = random.privateKey()
        let cplc = random.bytes(cplcLength)
        let certificate = try SoftSatochipCertificate.issue(
            deviceKey: authentikey.publicKey, serial: try SoftSatochip.serial(cplc: cplc), caKey: options.caKey ?? testCAKey(),
            serialNumber: random.bytes(8), issuerName: "keyhost soft SeedKeeper test CA")
        let state = SoftSeedKeeperState(authentikey: authentikey.revealedBytes(), cplc: cplc, certificate: certificate, setupDone: false,
                                        pin: Satochip.defaultPIN, pinLimit: 3, pinTries: 3, puk: nil, pukLimit: 3, pukTries: 0,
                                        label: [], secrets: [], nextID: 0, memorySize: options.memorySize,
                                        logs: [UInt8](repeating: 0, count: SoftSeedKeeperLog.ringSize), logHead: 0, logsTotal: 0)
        if let problem = state.problem() { throw SoftSeedKeeperError.corruptState(path: "(new card)", reason: problem) }
        return state
    }

    /// Power loss: the session goes, the persistent state stays. The lock of an interrupted import or export
    /// stays too (the applet keeps its lock_* fields in persistent memory), so the next command but GET STATUS
    /// and the secure channel's answers 9C30 once.
    public func powerCycle() {
        selected = false
        pinVerified = false
        channel = nil
        listCursor = nil
        logCursor = nil
    }

    // MARK: - Transport

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        let response: ResponseAPDU
        do {
            response = ResponseAPDU(data: try process(apdu), statusWord: .success)
        } catch let status as CardStatus {
            response = ResponseAPDU(statusWord: status.sw)
        }
        if state != savedState {
            try store?.save(state)
            savedState = state
        }
        return response
    }

    func fail(_ sw: UInt16) -> CardStatus { CardStatus(StatusWord(sw)) }

    func process(_ apdu: CommandAPDU) throws -> [UInt8] {
        if apdu.cla == 0x00 && apdu.ins == 0xA4 {
            guard apdu.p1 == 0x04, apdu.data == SeedKeeper.aid else { throw fail(0x6A82) }
            powerCycle()
            selected = true
            return try getStatus(CommandAPDU(cla: Satochip.cla, ins: 0x3C))  // SELECT answers the status
        }
        guard selected else {
            // The card manager answers before any applet is selected; only its CPLC is emulated.
            if apdu.cla == 0x80 && apdu.ins == 0xCA && apdu.p1 == 0x9F && apdu.p2 == 0x7F { return SoftSatochip.cplcAnswer(state.cplc) }
            if apdu.cla == 0x80 && apdu.ins == 0xCA { throw fail(0x6A88) }
            throw fail(0x6D00)
        }
        guard apdu.cla == Satochip.cla else { throw fail(0x6E00) }
        switch apdu.ins {
        case SatochipInstruction.getStatus.rawValue: return try getStatus(apdu)
        case SatochipInstruction.initSecureChannel.rawValue: return try initSecureChannel(apdu)
        case SatochipInstruction.processSecureChannel.rawValue:
            guard let channel else { throw fail(0x9C21) }
            let inner = try channel.open(apdu.data, random: random)
            let answer = try dispatch(inner)
            return answer.isEmpty ? [] : try channel.seal(answer)
        default:
            throw fail(0x9C20)  // the applet requires the secure channel for everything else
        }
    }

    func dispatch(_ apdu: CommandAPDU) throws -> [UInt8] {
        let ins = apdu.ins
        if !state.setupDone && ins != SatochipInstruction.setup.rawValue { throw fail(0x9C04) }
        if state.setupDone && ins == SatochipInstruction.setup.rawValue { throw fail(0x9C07) }
        if let lock, lock.ins != ins { throw resetLock(0x9C30) }
        switch ins {
        case SatochipInstruction.setup.rawValue: return try setup(apdu)
        case SatochipInstruction.verifyPIN.rawValue: return try verifyPIN(apdu)
        case SatochipInstruction.changePIN.rawValue: return try changePIN(apdu)
        case SatochipInstruction.unblockPIN.rawValue: return try unblockPIN(apdu)
        case SatochipInstruction.logoutAll.rawValue: pinVerified = false; return []
        case SatochipInstruction.getStatus.rawValue: return try getStatus(apdu)
        case SatochipInstruction.cardLabel.rawValue: return try cardLabel(apdu)
        case SatochipInstruction.getAuthentikey.rawValue, SatochipInstruction.exportAuthentikey.rawValue: return try authentikeyAnswer()
        case SatochipInstruction.exportPKIPubkey.rawValue: return try authentikeyPrivate().publicKey.uncompressed
        case SatochipInstruction.exportPKICertificate.rawValue: return try exportCertificate(apdu)
        case SatochipInstruction.challengeResponsePKI.rawValue: return try challengeResponse(apdu)
        case SeedKeeperInstruction.getSeedKeeperStatus.rawValue: return try seedKeeperStatus()
        case SeedKeeperInstruction.generateMasterSeed.rawValue: return try generateMasterSeed(apdu)
        case SeedKeeperInstruction.importSecret.rawValue: return try importSecret(apdu)
        case SeedKeeperInstruction.exportSecret.rawValue: return try exportSecret(apdu)
        case SeedKeeperInstruction.resetSecret.rawValue: return try resetSecret(apdu)
        case SeedKeeperInstruction.listSecretHeaders.rawValue: return try listSecretHeaders(apdu)
        case SeedKeeperInstruction.printLogs.rawValue: return try printLogs(apdu)
        case SeedKeeperInstruction.getExtendedKey.rawValue: return try getExtendedKey(apdu)
        default: throw fail(0x6D00)
        }
    }

    // MARK: - Status, secure channel, authentikey

    func getStatus(_ apdu: CommandAPDU) throws -> [UInt8] {
        let tries: [UInt8] = state.setupDone ? [UInt8(clamping: state.pinTries), UInt8(clamping: state.pukTries), 0, 0] : [0, 0, 0, 0]
        let versions: [UInt8] = [Self.protocolVersion.0, Self.protocolVersion.1, Self.appletVersion.0, Self.appletVersion.1]
        // needs2FA 0, "seeded" 1 (kept for Satochip clients), set up, needs secure channel 1, NFC policy 0 (enabled)
        return versions + tries + [0x00, 0x01, state.setupDone ? 1 : 0, 0x01, 0x00]
    }

    func initSecureChannel(_ apdu: CommandAPDU) throws -> [UInt8] {
        let opened = try SoftSatochipFamilyCard.initSecureChannel(apdu, authentikey: try authentikeyPrivate(), random: random)
        channel = opened.channel
        return opened.answer
    }

    func authentikeyPrivate() throws -> PrivateKey {
        guard let key = try? PrivateKey(bytes: state.authentikey) else { throw fail(0x9CFF) }
        return key
    }

    /// `[32 | authentikey x | sig_size | self-signature]` (no PIN needed on SeedKeeper).
    func authentikeyAnswer() throws -> [UInt8] { try SoftSatochipFamilyCard.authentikeyAnswer(try authentikeyPrivate()) }

    func exportCertificate(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        return try SoftSatochipFamilyCard.exportCertificate(apdu, certificate: state.certificate)
    }

    func challengeResponse(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        return try SoftSatochipFamilyCard.challengeResponse(apdu, authentikey: try authentikeyPrivate(), random: random)
    }
}
