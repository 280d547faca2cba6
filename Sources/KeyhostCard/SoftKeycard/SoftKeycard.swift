import KeyhostCrypto

/// A software Keycard: the applet's externally visible behaviour (status words, encodings, counters,
/// pairing slots, both secure channels) as a `CardChannel` peer, for tests and for scripting without hardware.
///
/// Emulates applet 3.2 (secure channel v1) or 4.0 (secure channel v2), chosen at creation.
/// Known deliberate difference: ECDSA uses RFC 6979 nonces (the card's are random). Kept on purpose because the
/// real 3.2 applet does it: EXPORT KEY of the master (an empty path) answers the chain code left over from the last
/// derivation since the card was powered, not the master's.
public final class SoftKeycard: CardChannel {
    public internal(set) var state: SoftKeycardState
    public let options: SoftKeycardOptions
    let random: RandomSource
    let store: SoftKeycardStore?
    private var savedState: SoftKeycardState?
    private var faults: [SoftKeycardFault] = []

    // Session (transient) state.
    let channelV1 = SoftSecureChannelV1()
    let channelV2 = SoftSecureChannelV2()
    var pinVerified = false
    var usingAlternatePIN = false
    var ephemeralPairingKey: [UInt8]?
    var pendingPairing: (slot: Int, cardChallenge: [UInt8])?
    /// The 3.2 applet's `derivationOutput`: key ‖ chain code of the last derivation. Transient memory cleared on
    /// reset (power), not on SELECT; a derivation of the empty path rewrites only the key half.
    var derivationOutput = [UInt8](repeating: 0, count: 64)

    /// A fixed test CA (SHA-256 of a label): trust it in clients that talk to soft 4.x cards.
    public static func testCAKey() -> PrivateKey {
        (try? PrivateKey(bytes: Hash.sha256(Array("keyhost soft keycard test CA".utf8)))) ?? PrivateKey.generate()
    }

    /// An in-memory card.
    public init(options: SoftKeycardOptions = SoftKeycardOptions()) throws {
        self.options = options
        self.random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = nil
        self.state = try SoftKeycard.freshState(options: options, random: random)
    }

    /// A card kept in `store`: loaded when the file exists, created (and saved) otherwise.
    public init(store: SoftKeycardStore, options: SoftKeycardOptions = SoftKeycardOptions()) throws {
        self.options = options
        self.random = options.randomSeed.map { SeededRandom(seed: $0) } ?? SystemRandom()
        self.store = store
        if let loaded = try store.load() {
            state = loaded
        } else {
            state = try SoftKeycard.freshState(options: options, random: random)
        }
        try persist()
    }

    static func freshState(options: SoftKeycardOptions, random: RandomSource) throws -> SoftKeycardState {
        guard options.appletVersion.major == 3 || options.appletVersion.major == 4 else {
            throw SoftKeycardError.unsupportedVersion(options.appletVersion)
        }
        let identity = random.privateKey()
        let certificate = try IdentityCertificate.issue(identityKey: identity.publicKey, caKey: options.caKey ?? testCAKey())
        return SoftKeycardState(
            appletVersion: options.appletVersion, uid: random.bytes(16), secureChannelKey: random.privateKey().revealedBytes(),
            identityKey: identity.revealedBytes(), certificate: certificate.bytes, credentials: nil, pairingSecret: nil,
            pairingKeys: Array(repeating: nil, count: max(0, min(options.pairingSlots, 255))), masterKey: nil, masterChainCode: nil,
            keyUID: [], keyPath: [], pinlessPath: [], publicData: [], ndefFile: nil, cashData: nil)
    }

    var isV2: Bool { state.appletVersion.major >= 4 }

    // MARK: - Test controls

    /// The next `count` commands fail with `fault` instead of reaching the applet.
    public func injectFault(_ fault: SoftKeycardFault, count: Int = 1) {
        faults += Array(repeating: fault, count: max(0, count))
    }

    /// Power loss: every session state is gone (persistent state stays).
    public func powerCycle() {
        resetSession()
        ephemeralPairingKey = nil
        wipe(&derivationOutput)
        derivationOutput = [UInt8](repeating: 0, count: 64)
    }

    func resetSession() {
        channelV1.reset()
        channelV2.reset()
        pinVerified = false
        usingAlternatePIN = false
        pendingPairing = nil
    }

    // MARK: - CardChannel

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        if !faults.isEmpty {
            switch faults.removeFirst() {
            case .statusWord(let sw): return ResponseAPDU(statusWord: sw)
            case .connectionDrop:
                powerCycle()
                throw CardChannelError.connectionLost
            }
        }
        let response = process(apdu)
        try persist()
        return response
    }

    func persist() throws {
        guard let store, state != savedState else { return }
        try store.save(state)
        savedState = state
    }

    func process(_ apdu: CommandAPDU) -> ResponseAPDU {
        if apdu.cla == 0x00 && apdu.ins == 0xA4 {
            return select(apdu)
        }
        return isV2 ? processV2(apdu) : processV1(apdu)
    }

    private func select(_ apdu: CommandAPDU) -> ResponseAPDU {
        guard apdu.p1 == 0x04, apdu.data.count >= 5, apdu.data.count <= Keycard.instanceAID.count,
              Array(Keycard.instanceAID.prefix(apdu.data.count)) == apdu.data else {
            return ResponseAPDU(statusWord: .fileNotFound)
        }
        resetSession()
        // The 3.2 applet erases its temporary pairing (slot 0xFF) on every SELECT, not only at power-off: a host paired
        // there must keep the card selected for as long as it needs that pairing.
        ephemeralPairingKey = nil
        do { return ResponseAPDU(data: isV2 ? try selectAnswerV2() : try selectAnswerV1(), statusWord: .success) } catch {
            return ResponseAPDU(statusWord: .unknown)
        }
    }

    /// A count that goes out in one byte; a state that would overflow it answers 6F00 instead of trapping.
    func byte(_ count: Int) throws -> UInt8 {
        guard let value = UInt8(exactly: count) else { throw CardStatus(.unknown) }
        return value
    }

    private func selectAnswerV1() throws -> [UInt8] {
        let scKey = (try? PrivateKey(bytes: state.secureChannelKey))?.publicKey.uncompressed ?? []
        guard state.isInitialized else { return [0x80, try byte(scKey.count)] + scKey }
        let fields: [TLV] = [
            TLV(tag: 0x8F, value: state.uid),
            TLV(tag: 0x80, value: scKey),
            TLV(tag: 0x02, value: [state.appletVersion.major, state.appletVersion.minor]),
            TLV(tag: 0x02, value: [try byte(state.freePairingSlots)]),
            TLV(tag: 0x8E, value: state.keyUID),
            TLV(tag: 0x8D, value: [Capabilities.all.rawValue]),
        ]
        let body = fields.flatMap { $0.encoded() }
        // The applet writes 81 before the length exactly when a key is loaded (the template is longer then).
        return [0xA4] + (state.masterKey != nil ? [0x81, try byte(body.count)] : [try byte(body.count)]) + body
    }

    private func selectAnswerV2() throws -> [UInt8] {
        var status: UInt8 = 0
        if let credentials = state.credentials { status = 0x10 | UInt8(truncatingIfNeeded: currentPINTries(credentials) & 0x0F) }
        let fields: [TLV] = [
            TLV(tag: 0x02, value: [state.appletVersion.major, state.appletVersion.minor]),
            TLV(tag: 0x8C, value: [status]),
            TLV(tag: 0x8E, value: state.keyUID),
            TLV(tag: 0x8D, value: [Capabilities.all.rawValue]),
            TLV(tag: 0x8A, value: state.certificate),
        ]
        let body = fields.flatMap { $0.encoded() }
        let length = options.selectLengthQuirk ? body.count - 1 : body.count
        return [0xA4] + (state.masterKey != nil ? [0x81, try byte(length)] : [try byte(length)]) + body
    }

    // MARK: - Applet 3.x dispatch

    /// What a command handler produced.
    enum Outcome {
        /// Nothing sent yet: the dispatcher answers 9000 (through the channel when it is open).
        case none
        /// Data to send through the secure channel with 9000.
        case secure([UInt8])
        /// Data sent in clear with 9000 (PAIR, OPEN SECURE CHANNEL, pre-channel answers).
        case plain([UInt8])
    }

    private func processV1(_ apdu: CommandAPDU) -> ResponseAPDU {
        guard state.isInitialized else {
            guard apdu.ins == KeycardInstruction.initialize.rawValue else { return ResponseAPDU(statusWord: .insNotSupported) }
            do { try initializeV1(apdu) } catch let status as CardStatus {
                return ResponseAPDU(statusWord: status.sw)
            } catch { return ResponseAPDU(statusWord: .unknown) }
            return ResponseAPDU(statusWord: .success)
        }
        let outcome: Outcome
        do {
            switch KeycardInstruction(rawValue: apdu.ins) {
            case .openSecureChannel: outcome = try openSecureChannelV1(apdu)
            case .mutuallyAuthenticate: outcome = .secure(try channelV1.mutuallyAuthenticate(apdu, random: random))
            case .pair: outcome = try pair(apdu)
            case .unpair: outcome = try unpair(apdu)
            case .getStatus: outcome = try getStatus(apdu, data: try channelV1.preprocess(apdu))
            case .verifyPIN: outcome = try verifyPIN(try channelV1.preprocess(apdu))
            case .changePIN: outcome = try changeCredential(apdu, data: try channelV1.preprocess(apdu))
            case .unblockPIN: outcome = try unblockPIN(try channelV1.preprocess(apdu))
            case .loadKey: outcome = try loadKey(apdu, data: try channelV1.preprocess(apdu))
            case .deriveKey: outcome = try deriveKey(apdu, data: try channelV1.preprocess(apdu))
            case .generateMnemonic: outcome = try generateMnemonic(apdu, data: try channelV1.preprocess(apdu))
            case .removeKey: outcome = try removeKey(try channelV1.preprocess(apdu))
            case .generateKey: outcome = try generateKey(try channelV1.preprocess(apdu))
            case .sign: outcome = try signV1(apdu)
            case .setPinlessPath: outcome = try setPinlessPath(try channelV1.preprocess(apdu))
            case .exportKey: outcome = try exportKey(apdu, data: try channelV1.preprocess(apdu))
            case .getData: outcome = try getData(apdu, data: channelV1.isOpen ? try channelV1.preprocess(apdu) : apdu.data)
            case .storeData: outcome = try storeData(apdu, data: try channelV1.preprocess(apdu))
            case .factoryReset:
                try factoryReset(apdu)
                return ResponseAPDU(statusWord: .success)
            default: throw CardStatus(.insNotSupported)
            }
        } catch let status as CardStatus {
            if channelV1.isOpen && status.sw != .securityStatusNotSatisfied { return channelV1.respond([], status.sw) }
            return ResponseAPDU(statusWord: status.sw)
        } catch {
            if channelV1.isOpen { return channelV1.respond([], .unknown) }
            return ResponseAPDU(statusWord: .unknown)
        }
        switch outcome {
        case .plain(let data): return ResponseAPDU(data: data, statusWord: .success)
        case .secure(let data): return channelV1.isOpen ? channelV1.respond(data, .success) : ResponseAPDU(data: data, statusWord: .success)
        case .none: return channelV1.isOpen ? channelV1.respond([], .success) : ResponseAPDU(statusWord: .success)
        }
    }

    // MARK: - Applet 4.x dispatch

    private func processV2(_ apdu: CommandAPDU) -> ResponseAPDU {
        let outcome: Outcome
        do {
            switch KeycardInstruction(rawValue: apdu.ins) {
            case .openSecureChannel:
                guard let identity = try? PrivateKey(bytes: state.identityKey) else { throw CardStatus(.conditionsNotSatisfied) }
                outcome = .plain(try channelV2.open(apdu, identityKey: identity, random: random))
            case .securedAPDU:
                outcome = try processSecuredV2(try channelV2.preprocess(apdu))
            case .factoryReset:
                try factoryReset(apdu)
                return ResponseAPDU(statusWord: .success)
            default:
                throw CardStatus(.conditionsNotSatisfied)
            }
        } catch let status as CardStatus {
            if channelV2.isOpen && status.sw != .securityStatusNotSatisfied { return channelV2.respond([], status.sw) }
            return ResponseAPDU(statusWord: status.sw)
        } catch {
            if channelV2.isOpen { return channelV2.respond([], .unknown) }
            return ResponseAPDU(statusWord: .unknown)
        }
        switch outcome {
        case .plain(let data): return ResponseAPDU(data: data, statusWord: .success)
        case .secure(let data): return channelV2.respond(data, .success)
        case .none: return channelV2.isOpen ? channelV2.respond([], .success) : ResponseAPDU(statusWord: .success)
        }
    }

    private func processSecuredV2(_ inner: CommandAPDU) throws -> Outcome {
        let data = inner.data
        guard state.isInitialized else {
            switch KeycardInstruction(rawValue: inner.ins) {
            case .initialize: try initializeV2(data); return .none
            case .getChallenge: return try getChallenge(inner)
            default: return .none
            }
        }
        switch KeycardInstruction(rawValue: inner.ins) {
        case .getStatus: return try getStatus(inner, data: data)
        case .verifyPIN: return try verifyPIN(data)
        case .changePIN: return try changeCredential(inner, data: data)
        case .unblockPIN: return try unblockPIN(data)
        case .loadKey: return try loadKey(inner, data: data)
        case .generateMnemonic: return try generateMnemonic(inner, data: data)
        case .removeKey: return try removeKey(data)
        case .generateKey: return try generateKey(data)
        case .sign: return try signV2(inner)
        case .exportKey: return try exportKey(inner, data: data)
        case .getData: return try getData(inner, data: data)
        case .storeData: return try storeData(inner, data: data)
        case .getChallenge: return try getChallenge(inner)
        default: throw CardStatus(.insNotSupported)
        }
    }

    private func getChallenge(_ inner: CommandAPDU) throws -> Outcome {
        let length = Int(inner.p1)
        guard length > 0, length <= 245 else { throw CardStatus(.incorrectP1P2) }
        return .secure(random.bytes(length))
    }

    // MARK: - Shared commands

    func getStatus(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard let credentials = state.credentials else { throw CardStatus(.conditionsNotSatisfied) }
        switch apdu.p1 {
        case 0x00:
            return .secure(TLV(tag: 0xA3, children: [
                TLV(tag: 0x02, value: [try byte(currentPINTries(credentials))]),
                TLV(tag: 0x02, value: [try byte(credentials.pukTries)]),
                TLV(tag: 0x01, value: [state.masterKey != nil ? 0xFF : 0x00]),
            ]).encoded())
        case 0x01 where !isV2:
            return .secure((try? KeyPath(source: .master, components: state.keyPath).encoded) ?? [])
        default:
            throw CardStatus(.incorrectP1P2)
        }
    }

    /// GET DATA as KeycardApplet.getData: no PIN. The NDEF file comes whole from its start on 3.2, cut at the secure
    /// channel's 223 bytes; 4.0 answers it from byte P2 × 4, at most 244 bytes at a time, and 6A86 past its end.
    func getData(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        switch DataSlot(rawValue: apdu.p1) {
        case .publicData: return .secure(state.publicData)
        case .cash: return .secure(state.cashData ?? [])
        case .ndef:
            var file = state.ndefFile ?? []
            file += [UInt8](repeating: 0, count: max(0, DataSlot.ndef.capacity - file.count))
            let total = (Int(file[0]) << 8 | Int(file[1])) + 2
            guard isV2 else { return .secure(Array(file[0..<min(total, SecureChannelV1.maxPlaintext)])) }
            // 4.0 copies from its 512-byte file up to the length: a length past the file fails the copy.
            guard total <= DataSlot.ndef.capacity else { throw CardStatus(.unknown) }
            let offset = Int(apdu.p2) * 4
            guard offset < total else { throw CardStatus(.incorrectP1P2) }
            let remaining = total - offset, largest = 245 / 4 * 4
            return .secure(Array(file[offset..<(offset + (remaining < 245 ? remaining : largest))]))
        case nil: throw CardStatus(.incorrectP1P2)
        }
    }

    /// STORE DATA as KeycardApplet.storeData: PIN verified; public and cash data whole (at most 127 bytes), the NDEF
    /// file from byte P2 × 4 (P2 a signed byte on 3.2, whose negative offsets fail the copy) up to its 512 bytes.
    func storeData(_ apdu: CommandAPDU, data: [UInt8]) throws -> Outcome {
        guard pinVerified else { throw CardStatus(.conditionsNotSatisfied) }
        guard let slot = DataSlot(rawValue: apdu.p1) else { throw CardStatus(.incorrectP1P2) }
        switch slot {
        case .publicData, .cash:
            guard data.count <= slot.capacity else { throw CardStatus(.wrongData) }
            if slot == .cash { state.cashData = data } else { state.publicData = data }
        case .ndef:
            guard isV2 || apdu.p2 < 0x80 else { throw CardStatus(.unknown) }
            let offset = Int(apdu.p2) * 4
            guard offset + data.count <= slot.capacity else { throw CardStatus(.wrongData) }
            var file = state.ndefFile ?? []
            file += [UInt8](repeating: 0, count: max(0, offset + data.count - file.count))
            file.replaceSubrange(offset..<(offset + data.count), with: data)
            state.ndefFile = file
        }
        return .none
    }

    func factoryReset(_ apdu: CommandAPDU) throws {
        guard apdu.p1 == 0xAA, apdu.p2 == 0x55 else { throw CardStatus(.incorrectP1P2) }
        resetSession()
        ephemeralPairingKey = nil
        state.credentials = nil
        state.pairingSecret = nil
        state.pairingKeys = Array(repeating: nil, count: state.pairingKeys.count)
        clearKeys()
        state.publicData = []  // the NDEF file and cash data stay: they belong to the card's other applets
        if !isV2 {
            // 3.2 drops its SecureChannel object: a new ECDH key and UID come with the next one.
            state.uid = random.bytes(16)
            state.secureChannelKey = random.privateKey().revealedBytes()
        }
    }

    func clearKeys() {
        wipe(&derivationOutput)
        derivationOutput = [UInt8](repeating: 0, count: 64)
        state.masterKey = nil
        state.masterChainCode = nil
        state.keyUID = []
        state.keyPath = []
        state.pinlessPath = []
    }
}
