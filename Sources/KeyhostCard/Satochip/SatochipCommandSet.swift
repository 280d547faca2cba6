import KeyhostCrypto

/// The Satochip client: one method per applet command, over any `CardChannel`.
///
/// The same session (SELECT, GET STATUS, secure channel, PIN, label, authenticity PKI) drives Satochip's sibling
/// applets, which share the applet's CardEdge code: `SeedKeeperCommandSet` holds one selected by the SeedKeeper AID.
///
/// Once GET STATUS says the card needs a secure channel, every command but GET STATUS and INIT SECURE CHANNEL is
/// wrapped in one, opened on first use as pysatochip does.
public final class SatochipCommandSet {
    public let channel: CardChannel
    public let random: RandomSource
    /// The applet SELECT names (Satochip's unless a sibling's).
    public let aid: [UInt8]
    /// The last GET STATUS answer.
    public internal(set) var status: SatochipStatus?
    /// The card's authentikey once a signed answer has shown it (IMPORT SEED, GET AUTHENTIKEY, INIT SECURE CHANNEL).
    public internal(set) var authentikey: PublicKey?
    /// The key GET EXTENDED KEY left loaded on the card (what SIGN with key FF uses).
    public internal(set) var loadedKey: PublicKey?
    var secureChannel: SatochipSecureChannel?

    public init(channel: CardChannel, random: RandomSource = SystemRandom(), aid: [UInt8] = Satochip.aid) {
        self.channel = channel
        self.random = random
        self.aid = aid
    }

    public var isSecureChannelOpen: Bool { secureChannel != nil }

    /// Instructions the applet takes in plain even when it requires a secure channel.
    static let plainInstructions: Set<SatochipInstruction> = [.select, .getStatus, .initSecureChannel, .processSecureChannel]

    // MARK: - Transport

    /// Sends a command (through the secure channel when the card needs one) and returns the answer data,
    /// throwing the mapped error on any status but 9000.
    @discardableResult
    func send(_ ins: SatochipInstruction, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = []) throws -> [UInt8] {
        let response = try exchange(ins.rawValue, p1: p1, p2: p2, data: data, naming: ins)
        if let error = SatochipError.from(response.statusWord, instruction: ins) { throw error }
        return response.data
    }

    /// Sends any applet instruction (a sibling applet's too) through the secure channel when the card needs one,
    /// and returns the inner answer whatever its status word; channel failures are reported under `naming`.
    func exchange(_ ins: UInt8, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [],
                  naming: SatochipInstruction = .processSecureChannel) throws -> ResponseAPDU {
        let command = CommandAPDU(cla: Satochip.cla, ins: ins, p1: p1, p2: p2, data: data)
        guard status?.needsSecureChannel == true && !Self.plainInstructions.contains(where: { $0.rawValue == ins }) else {
            return try channel.transmit(command)
        }
        if secureChannel == nil { try openSecureChannel() }
        guard let sc = secureChannel else { throw SatochipError.secureChannelRequired(naming) }
        let answer = try channel.transmit(try sc.wrap(command, random: random))
        if [0x9C21, 0x9C22, 0x9C23].contains(answer.statusWord.rawValue) { secureChannel = nil }
        return try sc.unwrap(answer, for: naming)
    }

    // MARK: - Session

    /// SELECT the Satochip applet, then GET STATUS.
    @discardableResult
    public func select() throws -> SatochipStatus {
        secureChannel = nil
        loadedKey = nil
        let response = try channel.transmit(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: aid))
        guard response.statusWord == .success else { throw SatochipError.notSatochip(response.statusWord) }
        return try getStatus()
    }

    /// GET STATUS (always in plain).
    @discardableResult
    public func getStatus() throws -> SatochipStatus {
        let parsed = try SatochipStatus(parsing: try send(.getStatus))
        status = parsed
        return parsed
    }

    /// INIT SECURE CHANNEL: ECDH with a fresh host key; returns the card's ephemeral key (checked against its
    /// self-signature, and against the authentikey's signature when the authentikey is already known).
    @discardableResult
    public func openSecureChannel() throws -> PublicKey {
        secureChannel = nil
        let hostKey = random.privateKey()
        let answer = try send(.initSecureChannel, data: hostKey.publicKey.uncompressed)
        var reader = SatochipAnswerReader(answer, instruction: .initSecureChannel)
        let x = try reader.coordinateX()
        let selfSig = try reader.signature()
        let cardKey = try reader.recoverKey(x: x, signature: selfSig.signature, signed: selfSig.signed)
        if reader.remaining > 0 {
            let authSig = try reader.signature()
            if let authentikey {
                try reader.requireSigned(by: authentikey, signature: authSig.signature, signed: authSig.signed, "the channel key")
            }
        }
        let shared = try hostKey.sharedSecretX(with: cardKey)
        secureChannel = try SatochipSecureChannel(sharedX: shared.revealedBytes())
        return cardKey
    }

    /// Drops the host's channel state (e.g. after the card was reset).
    public func closeSecureChannel() { secureChannel = nil }

    // MARK: - Label

    /// GET LABEL (needs the PIN).
    public func label() throws -> String {
        let data = try send(.cardLabel, p2: 0x01)
        guard let size = data.first, Int(size) == data.count - 1, Int(size) <= Satochip.maxLabelLength else {
            throw SatochipError.invalidResponse(.cardLabel, "label length byte does not match the \(data.count) bytes answered")
        }
        return String(decoding: data.dropFirst(), as: UTF8.self)
    }

    /// SET LABEL (needs the PIN); at most 64 bytes of UTF-8.
    public func setLabel(_ label: String) throws {
        let bytes = Array(label.utf8)
        guard bytes.count <= Satochip.maxLabelLength else {
            throw SatochipError.invalidArgument("a label is at most \(Satochip.maxLabelLength) bytes of UTF-8, this one has \(bytes.count)")
        }
        try send(.cardLabel, p2: 0x00, data: [UInt8(bytes.count)] + bytes)
    }
}
