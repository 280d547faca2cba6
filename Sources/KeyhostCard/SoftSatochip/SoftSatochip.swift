import KeyhostCrypto

/// Choices for a new soft Satochip.
public struct SoftSatochipOptions: Sendable {
    /// Makes every random byte reproducible (tests only).
    public var randomSeed: [UInt8]?
    /// The CA that signs the device certificate (default: `SoftSatochip.testCAKey()`).
    public var caKey: PrivateKey?

    public init(randomSeed: [UInt8]? = nil, caKey: PrivateKey? = nil) {
        self.randomSeed = randomSeed
        self.caKey = caKey
    }
}

/// A software Satochip: the behaviour of the Satochip applet (protocol 0.12, applet 0.6, the public
/// `Toporin/SatochipApplet` source) as a `CardChannel` peer: status words, PIN counters, the mandatory secure
/// channel, BIP32, signing, label and the authenticity PKI, for tests and for scripting without hardware.
///
/// Deliberate differences: ECDSA uses RFC 6979 low-S nonces (the card's are random and S is not normalised);
/// SIGN with key FF before any derivation answers 9C13 as newer applets do; 2FA, the single-key slots, the SeedKeeper
/// secure import and the reset-to-factory sequence are not emulated (6D00).
public final class SoftSatochip: CardChannel {
    public internal(set) var state: SoftSatochipState
    let random: RandomSource
    let store: SoftSatochipStore?
    private var savedState: SoftSatochipState

    // Session (transient) state.
    var selected = false
    var pinVerified = false
    var channel: SoftSatochipChannel?
    /// The key the last GET EXTENDED KEY loaded (what SIGN with key FF uses).
    var loadedKey: PrivateKey?

    static let cplcLength = 42
    static let protocolVersion: (UInt8, UInt8) = (0, 12)
    static let appletVersion: (UInt8, UInt8) = (0, 6)

    /// A fixed test CA (SHA-256 of a label): give its public key to `verifyAuthenticity` to accept soft cards.
    public static func testCAKey() -> PrivateKey {
        (try? PrivateKey(bytes: Hash.sha256(Array("keyhost soft satochip test CA".utf8)))) ?? PrivateKey.generate()
    }

    /// An in-memory card.
    public init(options: SoftSatochipOptions = SoftSatochipOptions()) throws {
        random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        store = nil
        state = try SoftSatochip.freshState(options: options, random: random)
        savedState = state
    }

    /// A card kept in `store`: loaded when the file exists, created (and saved) otherwise.
    public init(store: SoftSatochipStore, options: SoftSatochipOptions = SoftSatochipOptions()) throws {
        random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = store
        let fresh: SoftSatochipState
        if let loaded = try store.load() { fresh = loaded } else { fresh = try SoftSatochip.freshState(options: options, random: random) }
        state = fresh
        savedState = fresh
        try store.save(fresh)
    }

    static func freshState(options: SoftSatochipOptions, random: RandomSource) throws -> SoftSatochipState {
        let authentikey = random.privateKey()
        let cplc = random.bytes(cplcLength)
        let certificate = try SoftSatochipCertificate.issue(
            deviceKey: authentikey.publicKey, serial: try serial(cplc: cplc), caKey: options.caKey ?? testCAKey(),
            serialNumber: random.bytes(8))
        return SoftSatochipState(authentikey: authentikey.revealedBytes(), cplc: cplc, certificate: certificate, setupDone: false,
                                 pin: Satochip.defaultPIN, pinLimit: 3, pinTries: 3, puk: nil, pukLimit: 3, pukTries: 0,
                                 masterKey: nil, masterChainCode: nil, label: [])
    }

    /// The GET DATA 9F7F answer: tag, length, the CPLC bytes.
    static func cplcAnswer(_ cplc: [UInt8]) -> [UInt8] { [0x9F, 0x7F, UInt8(cplc.count)] + cplc }

    /// The card's serial as pysatochip computes it: SHA-1 of the CPLC, IIN and CIN answers (this card has no IIN/CIN).
    static func serial(cplc: [UInt8]) throws -> String { Hex.encode(try SatochipCrypto.sha1(cplcAnswer(cplc))) }

    /// Power loss: the session goes, the persistent state stays.
    public func powerCycle() {
        selected = false
        pinVerified = false
        channel = nil
        loadedKey = nil
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
            guard apdu.p1 == 0x04, apdu.data == Satochip.aid else { throw fail(0x6A82) }
            selected = true
            pinVerified = false
            channel = nil
            return []
        }
        guard selected else {
            // The card manager answers before any applet is selected; only its CPLC is emulated.
            if apdu.cla == 0x80 && apdu.ins == 0xCA && apdu.p1 == 0x9F && apdu.p2 == 0x7F { return Self.cplcAnswer(state.cplc) }
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
            // The applet requires the secure channel for everything else.
            throw fail(0x9C20)
        }
    }

    func dispatch(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard let ins = SatochipInstruction(rawValue: apdu.ins) else { throw fail(0x6D00) }
        if !state.setupDone && ins != .setup { throw fail(0x9C04) }
        if state.setupDone && ins == .setup { throw fail(0x9C07) }
        switch ins {
        case .setup: return try setup(apdu)
        case .verifyPIN: return try verifyPIN(apdu)
        case .changePIN: return try changePIN(apdu)
        case .unblockPIN: return try unblockPIN(apdu)
        case .logoutAll: pinVerified = false; return []
        case .getStatus: return try getStatus(apdu)
        case .cardLabel: return try cardLabel(apdu)
        case .importSeed: return try importSeed(apdu)
        case .resetSeed: return try resetSeed(apdu)
        case .getAuthentikey:
            try requirePIN()
            guard state.isSeeded else { throw fail(0x9C14) }
            return try authentikeyAnswer()
        case .exportAuthentikey: try requirePIN(); return try authentikeyAnswer()
        case .getExtendedKey: return try getExtendedKey(apdu)
        case .signTransactionHash: return try signTransactionHash(apdu)
        case .signMessage: throw fail(0x9C26)  // deprecated on the applets pysatochip 0.18 expects; it hashes client-side
        case .exportPKIPubkey: try requirePIN(); return try authentikeyPrivate().publicKey.uncompressed
        case .exportPKICertificate: return try exportCertificate(apdu)
        case .challengeResponsePKI: return try challengeResponse(apdu)
        case .select, .initSecureChannel, .processSecureChannel: throw fail(0x6D00)
        }
    }

    // MARK: - Status and secure channel

    func getStatus(_ apdu: CommandAPDU) throws -> [UInt8] {
        guard apdu.p1 == 0 else { throw fail(0x9C10) }
        guard apdu.p2 == 0 else { throw fail(0x9C11) }
        // PIN 1 and PUK 1 exist after SETUP; Satochip never uses them, so they keep their tries.
        let tries: [UInt8] = state.setupDone ? [UInt8(clamping: state.pinTries), UInt8(clamping: state.pukTries), 3, 3] : [0, 0, 0, 0]
        let versions: [UInt8] = [Self.protocolVersion.0, Self.protocolVersion.1, Self.appletVersion.0, Self.appletVersion.1]
        let seeded: UInt8 = state.isSeeded ? 1 : 0
        let setUp: UInt8 = state.setupDone ? 1 : 0
        // needs2FA (not emulated), seeded, set up, needs secure channel (always, as the applet)
        return versions + tries + [0x00, seeded, setUp, 0x01]
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

    /// `[32 | authentikey x | sig_size | self-signature]`.
    func authentikeyAnswer() throws -> [UInt8] { try SoftSatochipFamilyCard.authentikeyAnswer(try authentikeyPrivate()) }
}

/// The card side of the secure channel: checks the MAC and the IV counter of each command, answers under the
/// counter + 1 with fresh random IV bytes and no MAC, as the applet does.
final class SoftSatochipChannel {
    private let aesKey: [UInt8]
    private let macKey: [UInt8]
    /// The IV the next answer uses: 12 random bytes and (last command counter + 1).
    private var iv = [UInt8](repeating: 0, count: 16)

    init(sharedX: [UInt8]) throws {
        let keys = try SatochipCrypto.sessionKeys(sharedX: sharedX)
        aesKey = keys.aes
        macKey = keys.mac
    }

    private static func fail(_ sw: UInt16) -> CardStatus { CardStatus(StatusWord(sw)) }

    /// The inner command of a PROCESS SECURE CHANNEL data field.
    func open(_ data: [UInt8], random: RandomSource) throws -> CommandAPDU {
        guard data.count >= 18 else { throw Self.fail(0x6700) }
        let size = Int(data[16]) << 8 | Int(data[17])
        guard data.count >= 16 + 2 + size + 2 else { throw Self.fail(0x6700) }
        let macSize = Int(data[18 + size]) << 8 | Int(data[19 + size])
        guard macSize == 20 else { throw Self.fail(0x9C23) }
        guard data.count >= 20 + size + macSize else { throw Self.fail(0x6700) }
        let mac = try SatochipCrypto.hmacSHA1(key: macKey, data: Array(data[0..<(18 + size)]))
        guard mac == Array(data[(20 + size)..<(40 + size)]) else { throw Self.fail(0x9C23) }
        let commandIV = Array(data[0..<16])
        guard commandIV[15] & 0x01 == 1, commandIV[12...].lexicographicallyPrecedes(iv[12...]) == false,
              Array(commandIV[12...]) != Array(iv[12...]) else { throw Self.fail(0x9C22) }
        var counter = commandIV[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        counter &+= 1
        iv = random.bytes(12) + [UInt8(truncatingIfNeeded: counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
                                 UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)]
        guard size > 0, size % 16 == 0,
              let plain = try? SatochipCrypto.aes128CBC(Array(data[18..<(18 + size)]), key: aesKey, iv: commandIV, encrypt: false),
              let command = try? CommandAPDU(bytes: plain) else { throw Self.fail(0x6700) }
        return command
    }

    /// `[IV | size | AES-CBC(PKCS#7(answer))]`.
    func seal(_ answer: [UInt8]) throws -> [UInt8] {
        let ciphertext = try SatochipCrypto.aes128CBC(answer, key: aesKey, iv: iv, encrypt: true)
        return iv + [UInt8(ciphertext.count >> 8), UInt8(ciphertext.count & 0xFF)] + ciphertext
    }
}
