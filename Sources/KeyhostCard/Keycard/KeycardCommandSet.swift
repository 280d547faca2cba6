import KeyhostCrypto

/// The Keycard client: one method per applet command, over any `CardChannel`.
///
/// SELECT chooses the secure channel from the applet version (3.x → v1 with pairing, 4.x → v2 with
/// the identity certificate). Commands that need the channel are wrapped automatically once it is open.
public final class KeycardCommandSet {
    public let channel: CardChannel
    public let random: RandomSource
    /// CA keys a 4.x card's identity certificate must chain to.
    public var trustedCAKeys: [PublicKey]
    /// Identity keys trusted directly, whatever signed their certificate.
    public var trustedIdentityKeys: [PublicKey] = []

    public private(set) var applicationInfo: ApplicationInfo?
    public private(set) var secureChannel: KeycardSecureChannel?
    /// The v1 pairing used by `openSecureChannel()`; set it to reuse a stored pairing.
    public var pairing: Pairing?
    /// Sees every secure-channel exchange decrypted (inner command, inner answer), e.g. for a plaintext trace.
    public var secureExchangeObserver: ((CommandAPDU, ResponseAPDU) -> Void)?

    public init(channel: CardChannel, random: RandomSource = SystemRandom(), trustedCAKeys: [PublicKey] = IdentityCertificate.defaultCAKeys) {
        self.channel = channel
        self.random = random
        self.trustedCAKeys = trustedCAKeys
    }

    public var isSecureChannelOpen: Bool { secureChannel?.isOpen ?? false }

    var version: SecureChannelVersion { applicationInfo?.secureChannelVersion ?? .v1 }
    var appletName: String { applicationInfo.map { "\($0.version)" } ?? "unknown" }

    // MARK: - Transport helpers

    /// Sends a plain APDU and returns its response data, throwing the mapped error on a status other than 9000.
    @discardableResult
    func sendPlain(_ ins: KeycardInstruction, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], cla: UInt8 = Keycard.cla) throws -> [UInt8] {
        let response = try channel.transmit(CommandAPDU(cla: cla, ins: ins.rawValue, p1: p1, p2: p2, data: data))
        if let error = KeycardError.from(response.statusWord, instruction: ins) { throw error }
        return response.data
    }

    /// Sends an APDU through the secure channel and returns the inner response data.
    @discardableResult
    func sendSecure(_ ins: KeycardInstruction, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = []) throws -> [UInt8] {
        guard let sc = secureChannel, sc.isOpen else { throw KeycardError.secureChannelNotOpen(ins) }
        let command = CommandAPDU(cla: Keycard.cla, ins: ins.rawValue, p1: p1, p2: p2, data: data)
        let response = try sc.unwrap(try channel.transmit(try sc.wrap(command)), for: command)
        secureExchangeObserver?(command, response)
        if !sc.isOpen { secureChannel = nil }
        if let error = KeycardError.from(response.statusWord, instruction: ins) { throw error }
        return response.data
    }

    func requireV1(_ ins: KeycardInstruction) throws {
        guard version == .v1 else { throw KeycardError.unsupported(ins, applet: appletName) }
    }

    /// 4.x dropped DERIVE KEY: every path is taken from the master key.
    static func absolutePathsOnly(_ ins: KeycardInstruction, _ applet: String) -> KeycardError {
        .unsupportedForm(ins, what: "a relative path (./…, ../…); give the full path from m/", applet: applet)
    }

    func requireV2(_ ins: KeycardInstruction) throws {
        guard version == .v2 else { throw KeycardError.unsupported(ins, applet: appletName) }
    }

    // MARK: - Selection and set-up

    /// SELECT the applet; forgets any secure channel (the card does too).
    @discardableResult
    public func select() throws -> ApplicationInfo {
        secureChannel?.close()
        secureChannel = nil
        let data = try sendPlain(.select, p1: 0x04, data: Keycard.instanceAID, cla: 0x00)
        let info = try ApplicationInfo(selectResponse: data)
        applicationInfo = info
        return info
    }

    func requireInfo(_ ins: KeycardInstruction) throws -> ApplicationInfo {
        guard let info = applicationInfo else { throw KeycardError.invalidArgument("\(ins) needs SELECT first") }
        return info
    }

    /// INIT: sets PIN, PUK and (v1) the pairing secret; optional retry limits and duress (alternate) PIN.
    ///
    /// The applet always has a duress PIN, which opens a decoy wallet and wins when both PINs match:
    /// left out of INIT it is the PIN itself (4.0) or the PUK's first six digits (3.2). So unless
    /// `alternatePIN` is given, six random digits that nobody knows are sent instead, and the user's
    /// PIN opens the real wallet. `appletDefaultDuressPIN` sends what other tools send (for tests).
    public func initialize(pin: SecretBytes, puk: SecretBytes, pairingSecret: SecretBytes? = nil,
                           pinRetries: Int? = nil, pukRetries: Int? = nil, alternatePIN: SecretBytes? = nil,
                           appletDefaultDuressPIN: Bool = false) throws {
        var pinBytes = pin.revealedBytes(), pukBytes = puk.revealedBytes()
        var alternate = alternatePIN?.revealedBytes()
        defer { wipe(&pinBytes); wipe(&pukBytes); if alternate != nil { wipe(&alternate!) } }
        if !appletDefaultDuressPIN && alternate == nil { alternate = unguessableDuressPIN(avoiding: [pinBytes, Array(pukBytes.prefix(6))]) }
        let info = try requireInfo(.initialize)
        guard !info.isInitialized else { throw KeycardError.alreadyInitialized }
        try checkDigits(bytes: pinBytes, Keycard.pinLength, "PIN")
        try checkDigits(bytes: pukBytes, Keycard.pukLength, "PUK")
        var data = pinBytes + pukBytes
        defer { wipe(&data) }
        if info.secureChannelVersion == .v1 {
            guard let secret = pairingSecret, secret.count == 32 else { throw KeycardError.invalidArgument("secure channel v1 INIT needs a 32-byte pairing secret") }
            data += secret.revealedBytes()
        } else if pairingSecret != nil {
            throw KeycardError.invalidArgument("secure channel v2 cards take no pairing secret")
        }
        if pinRetries != nil || pukRetries != nil || alternate != nil {
            let pinLimit = pinRetries ?? 3, pukLimit = pukRetries ?? 5
            guard (2...10).contains(pinLimit), (3...12).contains(pukLimit) else {
                throw KeycardError.invalidArgument("PIN retries must be 2...10 and PUK retries 3...12")
            }
            data += [UInt8(pinLimit), UInt8(pukLimit)]
            if let alternate {
                try checkDigits(bytes: alternate, Keycard.pinLength, "alternate PIN")
                data += alternate
            }
        }
        if info.secureChannelVersion == .v1 {
            guard let cardKey = info.secureChannelPublicKey else { throw KeycardError.invalidResponse(.select, "no secure channel key to encrypt INIT to") }
            let ephemeral = random.privateKey()
            let shared = try ephemeral.sharedSecretX(with: cardKey)
            let iv = random.bytes(16)
            let ciphertext = try AES256CBC.encrypt(ISO9797M2.pad(data), key: shared.revealedBytes(), iv: iv)
            let pub = ephemeral.publicKey.uncompressed
            try sendPlain(.initialize, data: [UInt8(pub.count)] + pub + iv + ciphertext)
        } else {
            if !isSecureChannelOpen { try openSecureChannel() }
            try sendSecure(.initialize, data: data)
        }
    }

    /// INIT from text, for this module's tests (`@testable`): a String cannot be wiped, so the API takes bytes.
    func initialize(pin: String, puk: String, pairingSecret: SecretBytes? = nil, pinRetries: Int? = nil, pukRetries: Int? = nil,
                    alternatePIN: String? = nil, appletDefaultDuressPIN: Bool = false) throws {
        try initialize(pin: SecretBytes(Array(pin.utf8)), puk: SecretBytes(Array(puk.utf8)), pairingSecret: pairingSecret,
                       pinRetries: pinRetries, pukRetries: pukRetries, alternatePIN: alternatePIN.map { SecretBytes(Array($0.utf8)) },
                       appletDefaultDuressPIN: appletDefaultDuressPIN)
    }

    /// Six random digits equal to none of `avoiding`; never shown, so the decoy wallet stays closed.
    func unguessableDuressPIN(avoiding: [[UInt8]]) -> [UInt8] {
        while true {
            let digits = random.bytes(6).map { 0x30 + $0 % 10 }
            if !avoiding.contains(digits) { return digits }
        }
    }

    /// PAIR (v1): proves knowledge of the pairing secret both ways and returns the new pairing, also kept in `pairing`.
    @discardableResult
    public func pair(secret: SecretBytes, mode: PairingMode = .any) throws -> Pairing {
        try requireV1(.pair)
        guard secret.count == 32 else { throw KeycardError.invalidArgument("a pairing secret has 32 bytes") }
        let challenge = random.bytes(32)
        let step1 = try sendPlain(.pair, p1: 0x00, p2: mode.rawValue, data: challenge)
        guard step1.count == 64 else { throw KeycardError.invalidResponse(.pair, "step 1 answer of \(step1.count) bytes; expected 64") }
        let secretBytes = secret.revealedBytes()
        guard Hash.sha256(secretBytes + challenge) == Array(step1[0..<32]) else { throw KeycardError.pairingCryptogramMismatch }
        let step2 = try sendPlain(.pair, p1: 0x01, data: Hash.sha256(secretBytes + Array(step1[32..<64])))
        guard step2.count == 33 else { throw KeycardError.invalidResponse(.pair, "step 2 answer of \(step2.count) bytes; expected 33") }
        let result = try Pairing(index: step2[0], key: SecretBytes(Hash.sha256(secretBytes + Array(step2[1...]))))
        pairing = result
        return result
    }

    /// PAIR with a password (PBKDF2-derived pairing secret).
    @discardableResult
    public func pair(password: String, mode: PairingMode = .any) throws -> Pairing {
        try pair(secret: PairingSecret.derive(password: password), mode: mode)
    }

    /// Opens the secure channel the card speaks: v1 OPEN SECURE CHANNEL + MUTUALLY AUTHENTICATE with `pairing`,
    /// or v2 with the certificate checked against `trustedCAKeys` and the handshake signature verified.
    public func openSecureChannel() throws {
        let info = try requireInfo(.openSecureChannel)
        secureChannel?.close()
        secureChannel = nil
        switch info.secureChannelVersion {
        case .v1:
            guard info.isInitialized else { throw KeycardError.notInitialized }
            guard let pairing else { throw KeycardError.notPaired }
            guard let cardKey = info.secureChannelPublicKey else { throw KeycardError.invalidResponse(.select, "no secure channel key") }
            let ephemeral = random.privateKey()
            let answer = try sendPlain(.openSecureChannel, p1: pairing.index, data: ephemeral.publicKey.uncompressed)
            guard answer.count == 48 else { throw KeycardError.invalidResponse(.openSecureChannel, "answer of \(answer.count) bytes; expected 48") }
            let shared = try ephemeral.sharedSecretX(with: cardKey)
            let sc = SecureChannelV1.derive(sharedSecret: shared, pairingKey: pairing.key, salt: Array(answer[0..<32]), iv: Array(answer[32..<48]))
            secureChannel = sc
            let proof = try sendSecure(.mutuallyAuthenticate, data: random.bytes(32))
            guard proof.count == 32 else {
                secureChannel = nil
                throw KeycardError.invalidResponse(.mutuallyAuthenticate, "answer of \(proof.count) bytes; expected 32")
            }
        case .v2:
            guard let certificate = info.identityCertificate else { throw KeycardError.untrustedCard("the card sent no identity certificate") }
            try certificate.checkTrust(caKeys: trustedCAKeys, identityKeys: trustedIdentityKeys)
            let salt = random.bytes(32)
            let ephemeral = random.privateKey()
            let clientKey = ephemeral.publicKey.uncompressed
            let answer = try sendPlain(.openSecureChannel, data: salt + clientKey)
            guard answer.count > 65 else { throw KeycardError.invalidResponse(.openSecureChannel, "answer of \(answer.count) bytes is too short") }
            let cardKeyBytes = Array(answer[0..<65])
            try certificate.verify(digest: SecureChannelV2.transcriptDigest(salt: salt, clientKey: clientKey, cardKey: cardKeyBytes), der: Array(answer[65...]))
            let cardKey: PublicKey
            do { cardKey = try PublicKey(bytes: cardKeyBytes) } catch { throw KeycardError.invalidResponse(.openSecureChannel, "card key: \(error)") }
            secureChannel = try SecureChannelV2.derive(salt: salt, sharedX: ephemeral.sharedSecretX(with: cardKey))
        }
    }

    /// Drops the client's side of the secure channel (the card drops its side on the next SELECT).
    public func closeSecureChannel() {
        secureChannel?.close()
        secureChannel = nil
    }

    /// UNPAIR (v1): frees slot `index` (PIN must be verified).
    public func unpair(index: UInt8) throws {
        try requireV1(.unpair)
        try sendSecure(.unpair, p1: index)
        if pairing?.index == index { pairing = nil }
    }

    /// FACTORY RESET: a plain APDU with the magic P1 P2 (AA 55); works without PIN and with any counters.
    public func factoryReset() throws {
        try sendPlain(.factoryReset, p1: 0xAA, p2: 0x55)
        secureChannel?.close()
        secureChannel = nil
        pairing = nil
    }

    func checkDigits(_ value: String, _ count: Int, _ what: String) throws {
        guard value.utf8.count == count, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw KeycardError.invalidArgument("the \(what) must be \(count) digits")
        }
    }
}
