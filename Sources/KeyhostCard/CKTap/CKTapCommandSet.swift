import KeyhostCrypto

/// A client for Coinkite's tap cards (TAPSIGNER, SATSCARD, SATSCHIP) over any `CardChannel`.
///
/// Every request is one APDU (CLA 00, INS CB) holding a CBOR map; answers are CBOR maps, errors carry `code`.
/// The client tracks the card nonce each answer hands on, verifies every signature the card makes
/// before it returns a value, and keeps CVCs in `SecretBytes`.
public final class CKTapCommandSet {
    public let channel: CardChannel
    let random: RandomSource
    /// The last status read (SELECT or `status`).
    public internal(set) var status: CKTapStatus?
    /// The nonce the card expects the next authenticated command to be bound to.
    public internal(set) var cardNonce: [UInt8]?

    /// Largest CBOR request: one short APDU.
    static let maxRequest = CommandAPDU.maxShortData
    /// Tries `sign` makes when the card answers 205 (unlucky number), as cktap does.
    static let signAttempts = 5

    public init(channel: CardChannel, random: RandomSource = SystemRandom()) {
        self.channel = channel
        self.random = random
    }

    /// ISO SELECT of the applet; its answer is a status.
    @discardableResult
    public func select() throws -> CKTapStatus {
        let answer = try channel.transmit(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: CKTap.appletID))
        let parsed = try decodeAnswer(answer, command: "select")
        let st = try CKTapStatus(parsed, command: "select")
        remember(st)
        return st
    }

    /// The card's current status.
    @discardableResult
    public func getStatus() throws -> CKTapStatus {
        let st = try CKTapStatus(try send("status"), command: "status")
        remember(st)
        return st
    }

    private func remember(_ st: CKTapStatus) {
        status = st
        cardNonce = st.cardNonce
    }

    /// The status read last, or a fresh one.
    func knownStatus() throws -> CKTapStatus {
        if let status { return status }
        return try getStatus()
    }

    /// Spends one second of the card's CVC back-off; the delay (seconds) still left.
    @discardableResult
    public func wait() throws -> Int {
        let f = try CKTapFields(try send("wait"), command: "wait")
        let left = try f.optionalInt("auth_delay", range: 0...3600) ?? 0
        status?.authDelay = left
        return left
    }

    // MARK: - Transport

    /// Sends `command` with `arguments`; the answer map, or the card's error as `CKTapError`.
    func send(_ command: String, _ arguments: [(String, CKTapCBOR)] = []) throws -> CKTapCBOR {
        let request = CKTapCBORCoding.encode(.textMap(arguments + [("cmd", .text(command))]))
        guard request.count <= Self.maxRequest else { throw CKTapError.invalidArgument("the \(command) request is \(request.count) bytes; one APDU holds \(Self.maxRequest)") }
        let answer = try channel.transmit(CommandAPDU(cla: CKTap.cla, ins: CKTap.ins, data: request))
        return try decodeAnswer(answer, command: command)
    }

    /// Checks the status word and the CBOR of an answer, turns an error map into `CKTapError`, and keeps the new nonce.
    func decodeAnswer(_ answer: ResponseAPDU, command: String) throws -> CKTapCBOR {
        let value: CKTapCBOR
        do { value = try CKTapCBORCoding.decode(answer.data) } catch let error as CKTapCBORError {
            if !answer.statusWord.isSuccess { throw CKTapError.statusWord(answer.statusWord, command: command) }
            throw CKTapError.malformedAnswer(command: command, reason: error.description)
        }
        let f = try CKTapFields(value, command: command)
        if f.has("error") || f.has("code") || !answer.statusWord.isSuccess {
            guard let code = f.map["code"]?.int, (100...999).contains(code) else {
                if !answer.statusWord.isSuccess { throw CKTapError.statusWord(answer.statusWord, command: command) }
                throw f.fail("an error answer without a 3-digit 'code'")
            }
            let message = String((f.map["error"]?.textString ?? "").prefix(80))
            let delay: Int? = code == 429 ? (try? f.optionalInt("auth_delay", range: 0...3600)) ?? nil : nil
            throw CKTapError.fromCard(code: code, command: command, message: message, delay: delay)
        }
        if f.has("card_nonce") { cardNonce = try f.bytes("card_nonce", count: CKTap.cardNonceSize) }
        return value
    }

    /// Sends `command` with a CVC proof; `encrypt` may XOR arguments with the session key first.
    /// The answer and the session key (for decrypting what comes back).
    func sendAuthenticated(_ command: String, cvc: SecretBytes, _ arguments: [(String, CKTapCBOR)] = [],
                           encrypt: (SecretBytes) -> [(String, CKTapCBOR)] = { _ in [] }) throws -> (answer: CKTapCBOR, sessionKey: SecretBytes) {
        try Self.checkCVC(cvc)
        let st = try knownStatus()
        guard let nonce = cardNonce else { throw CKTapError.malformedAnswer(command: command, reason: "no card nonce known; read status first") }
        let proof = try CKTapAuth.prove(cvc: cvc, command: command, cardPublicKey: st.cardPublicKey, cardNonce: nonce, random: random)
        let args = arguments + encrypt(proof.sessionKey) + [("epubkey", .bytes(proof.ephemeralPublicKey)), ("xcvc", .bytes(proof.maskedCVC))]
        do {
            return (try send(command, args), proof.sessionKey)
        } catch CKTapError.rateLimited(command: let command, delay: nil) {
            // The error names no delay; status does (and costs no nonce).
            throw CKTapError.rateLimited(command: command, delay: (try? getStatus())?.authDelay)
        }
    }

    static func checkCVC(_ cvc: SecretBytes) throws {
        guard CKTap.cvcLengths.contains(cvc.count) else {
            throw CKTapError.invalidArgument("a CVC has 6 to 32 bytes; the one given has \(cvc.count)")
        }
    }

    /// A 16-byte nonce the card will accept.
    func userNonce() -> [UInt8] {
        while true {
            let n = random.bytes(CKTap.userNonceSize)
            if CKTap.isStrongNonce(n) { return n }
        }
    }

    func requireProduct(_ tapsigner: Bool, command: String) throws -> CKTapStatus {
        let st = try knownStatus()
        guard st.isTapsigner == tapsigner else { throw CKTapError.wrongProduct(command: command, needs: tapsigner ? "TAPSIGNER" : "SATSCARD") }
        return st
    }

    /// Checks that `publicKey` signed SHA-256(OPENDIME ‖ card nonce ‖ user nonce ‖ `suffix`).
    func verifyProof(_ signature: ECDSASignature, by publicKey: PublicKey, cardNonce: [UInt8], userNonce: [UInt8], suffix: [UInt8], command: String) throws {
        let digest = Hash.sha256(CKTap.signedPrefix + cardNonce + userNonce + suffix)
        guard (try? publicKey.verify(signature, digest: digest)) == true else {
            throw CKTapError.verificationFailed(command: command, reason: "the card's signature does not verify against the key it names")
        }
    }

    /// The bech32 P2WPKH address of `key` on the card's network.
    func address(of key: PublicKey, testnet: Bool) throws -> String {
        try SegwitAddress.encode(hrp: testnet ? "tb" : "bc", version: 0, program: key.hash160)
    }
}
