#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto

/// A software TAPSIGNER or SATSCARD: the answers of Coinkite's cards (as their emulator `ecard.py` gives them
/// and the protocol document adds: the CVC back-off with `auth_delay`, 429 and `wait`) as a `CardChannel` peer.
///
/// Known differences from a real card: signatures use RFC 6979 nonces ground for low R (the card's are random);
/// the certificate chain leads to `testFactoryRootKey()`, not Coinkite's root, so cktap calls the card counterfeit.
public final class SoftCKTap: CardChannel {
    public internal(set) var state: SoftCKTapState
    public let options: SoftCKTapOptions
    let random: RandomSource
    let store: SoftCKTapStore?
    /// Volatile, as on the card: SELECT and the nonce are lost at power off.
    var selected = false
    var nonce: [UInt8]

    /// Slots a new SATSCARD has.
    public static let satscardSlots = 10
    /// The applet version reported.
    public static let version = "1.0.3"

    /// The fixed test factory root (SHA-256 of a label): trust it to check a software card's certificates.
    public static func testFactoryRootKey() -> PrivateKey { fixedKey("keyhost soft cktap test factory root") }
    static func testBatchKey() -> PrivateKey { fixedKey("keyhost soft cktap test batch") }
    private static func fixedKey(_ label: String) -> PrivateKey {
        (try? PrivateKey(bytes: Hash.sha256(Array(label.utf8)))) ?? PrivateKey.generate()
    }

    /// An in-memory card.
    public init(options: SoftCKTapOptions) throws {
        self.options = options
        self.random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = nil
        self.state = try Self.freshState(options: options, random: random)
        self.nonce = random.bytes(CKTap.cardNonceSize)
    }

    /// A card kept in `store`: loaded when the file exists (its kind must match), created and saved otherwise.
    public init(store: SoftCKTapStore, options: SoftCKTapOptions) throws {
        self.options = options
        self.random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = store
        if let loaded = try store.load() {
            guard loaded.kind == options.kind else {
                throw SoftCKTapError.corruptState(path: store.url.path, reason: "it holds a \(loaded.kind.rawValue), not a \(options.kind.rawValue)")
            }
            state = loaded
        } else {
            state = try Self.freshState(options: options, random: random)
        }
        nonce = random.bytes(CKTap.cardNonceSize)
        try store.save(state)
    }

    /// A card as it leaves the factory: certificates from the test root, a SATSCARD's slot 0 made
    /// (the factory uses the birth block's hash as chain code), a TAPSIGNER blank with its backup key.
    static func freshState(options: SoftCKTapOptions, random: RandomSource) throws -> SoftCKTapState {
        guard CKTap.cvcLengths.contains(options.cvc.count) else { throw SoftCKTapError.invalidOption("a CVC has 6 to 32 bytes") }
        let cardKey = random.privateKey()
        let batch = testBatchKey()
        let chain = [try certificate(signer: batch, over: cardKey.publicKey), try certificate(signer: testFactoryRootKey(), over: batch.publicKey)]
        var state = SoftCKTapState(kind: options.kind, version: version, birth: 700_001, testnet: options.testnet,
                                   cardKey: cardKey.revealedBytes(), certificateChain: chain, cvc: options.cvc,
                                   backupKey: nil, numBackups: 0, activeSlot: 0, slots: [], authFailures: 0, authDelay: 0)
        switch options.kind {
        case .tapsigner:
            state.backupKey = random.bytes(16)
            state.slots = [.unused]
        case .satscard:
            state.slots = Array(repeating: .unused, count: satscardSlots)
            state.slots[0] = SoftCKTapState.Slot(masterKey: random.privateKey().revealedBytes(), chainCode: random.bytes(32), path: [0], sealed: true)
        }
        return state
    }

    /// A 65-byte certificate: recovery header 31 + id (BIP-137 compressed P2PKH, as libwally writes it), r, s.
    static func certificate(signer: PrivateKey, over key: PublicKey) throws -> [UInt8] {
        let sig = try signer.signRecoverable(digest: Hash.sha256(key.compressed))
        return [UInt8(31 + sig.recoveryID)] + sig.r + sig.s
    }

    /// Power loss: the applet is deselected and the nonce (RAM) is new; slots and counters stay.
    public func powerCycle() {
        selected = false
        nonce = random.bytes(CKTap.cardNonceSize)
    }

    /// The card's key pair.
    var cardKey: PrivateKey {
        get throws { try PrivateKey(bytes: state.cardKey) }
    }

    func newNonce() { nonce = random.bytes(CKTap.cardNonceSize) }

    func persist() throws { try store?.save(state) }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        if apdu.cla == 0x00 && apdu.ins == 0xA4 {
            guard apdu.p1 == 0x04, apdu.data == CKTap.appletID else { return ResponseAPDU(statusWord: .fileNotFound) }
            selected = true
            return ResponseAPDU(data: CKTapCBORCoding.encode(try statusMap()), statusWord: .success)
        }
        guard selected else { return ResponseAPDU(statusWord: .insNotSupported) }
        guard apdu.cla == CKTap.cla else { return ResponseAPDU(statusWord: .claNotSupported) }
        guard apdu.ins == CKTap.ins else { return ResponseAPDU(statusWord: .insNotSupported) }
        let before = state
        let answer: CKTapCBOR
        do {
            answer = try handle(apdu.data)
        } catch let failure as SoftCKTapFailure {
            answer = .textMap([("error", .text(failure.message)), ("code", .int(failure.code))])
        }
        if state != before { try persist() }
        return ResponseAPDU(data: CKTapCBORCoding.encode(answer), statusWord: .success)
    }

    private func handle(_ data: [UInt8]) throws -> CKTapCBOR {
        let request: CKTapCBOR
        do { request = try CKTapCBORCoding.decode(data) } catch { throw SoftCKTapFailure(422, "bad cbor") }
        guard case .map = request else { throw SoftCKTapFailure(422, "bad cbor top-level obj") }
        guard let command = request["cmd"]?.textString, !command.isEmpty else { throw SoftCKTapFailure(404, "no cmd in msg") }
        let args = SoftCKTapArguments(map: request)
        switch command {
        case "status": return try statusMap()
        case "read": return try read(args)
        case "derive": return try derive(args)
        case "certs": return .textMap([("cert_chain", .array(state.certificateChain.map { .bytes($0) }))])
        case "check": return try check(args)
        case "new": return try new(args)
        case "sign": return try sign(args)
        case "wait": return waitOneSecond()
        case "nfc": return .textMap([("url", .text(nfcURL()))])
        case "xpub": return try xpub(args)
        case "backup": return try backup(args)
        case "change": return try change(args)
        case "unseal": return try unseal(args)
        case "dump": return try dump(args)
        default: throw SoftCKTapFailure(404, "unknown cmd")
        }
    }

    var currentSlot: SoftCKTapState.Slot { state.slots[state.activeSlot] }
    var isTapsigner: Bool { state.kind == .tapsigner }

    func statusMap() throws -> CKTapCBOR {
        var pairs: [(String, CKTapCBOR)] = [("proto", .int(CKTap.protocolVersion)), ("ver", .text(state.version)), ("birth", .int(state.birth))]
        if isTapsigner {
            pairs.append(("tapsigner", .bool(true)))
            if currentSlot.isUsed { pairs.append(("path", .array(currentSlot.path.map { .unsigned(UInt64($0)) }))) }
            pairs.append(("num_backups", .int(state.numBackups)))
        } else {
            pairs.append(("slots", .array([.int(state.activeSlot), .int(state.slots.count)])))
            if currentSlot.isUsed { pairs.append(("addr", .text(CKTap.blanked(try address(of: try slotKeys(state.activeSlot).key.publicKey))))) }
        }
        pairs += [("pubkey", .bytes(try cardKey.publicKey.compressed)), ("card_nonce", .bytes(nonce))]
        if state.testnet { pairs.append(("testnet", .bool(true))) }
        if state.authDelay > 0 { pairs.append(("auth_delay", .int(state.authDelay))) }
        return .textMap(pairs)
    }

    func address(of key: PublicKey) throws -> String {
        try SegwitAddress.encode(hrp: state.testnet ? "tb" : "bc", version: 0, program: key.hash160)
    }

    /// One second of back-off spent (`wait`): the real card takes a second per call.
    func waitOneSecond() -> CKTapCBOR {
        if state.authDelay > 0 { state.authDelay -= 1 }
        if options.secondsPerWait > 0 { usleep(UInt32(min(options.secondsPerWait, 10) * 1_000_000)) }
        return .textMap([("success", .bool(true)), ("auth_delay", .int(state.authDelay))])
    }

    private func nfcURL() -> String {
        (isTapsigner ? "tapsigner.com/start#" : "getsatscard.com/start#") + "t=1&u=" + (currentSlot.isUsed ? "S" : "U")
    }
}

/// A numbered error the card answers with.
struct SoftCKTapFailure: Error {
    let code: Int
    let message: String
    init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A request's arguments, read as leniently as the card does (unknown keys are ignored).
struct SoftCKTapArguments {
    let map: CKTapCBOR

    func has(_ key: String) -> Bool { map[key].map { $0 != CKTapCBOR.null } ?? false }
    func bytes(_ key: String) -> [UInt8]? { map[key]?.byteString }
    func int(_ key: String) -> Int? { map[key]?.int }
    func flag(_ key: String) -> Bool { map[key]?.boolValue ?? false }
    func path(_ key: String) throws -> [UInt32]? {
        guard let value = map[key] else { return nil }
        guard let items = value.arrayValue, items.count <= 32 else { throw SoftCKTapFailure(400, "bad path") }
        return try items.map {
            guard case .unsigned(let n) = $0, n <= UInt64(UInt32.max) else { throw SoftCKTapFailure(400, "bad path") }
            return UInt32(n)
        }
    }

    /// A user nonce: 16 bytes (400 otherwise), not all one byte (417).
    func nonce() throws -> [UInt8] {
        guard let n = bytes("nonce"), n.count == CKTap.userNonceSize else { throw SoftCKTapFailure(400, "bad nonce size") }
        guard CKTap.isStrongNonce(n) else { throw SoftCKTapFailure(417, "weak nonce") }
        return n
    }
}
