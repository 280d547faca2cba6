import Testing
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

private let pin = Array("123456".utf8)
private let puk = Array("987654321098".utf8)
private let password = Array("KeycardTest".utf8)

/// A reader holding one software card, as a PC/SC reader would: what the opener does with a real card, in process.
private final class OneCardReader: CardReaderSource {
    let name = "Test Reader 00 00"
    let card: SoftKeycard
    init(_ card: SoftKeycard) { self.card = card }
    func readerNames() throws -> [String] { [name] }
    func readerStates() throws -> [CardReaderState] { [CardReaderState(name: name, cardPresent: true)] }
    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel { card }
}

/// INIT (and on 3.x the pairing secret) of a blank card through a session, as `s:init{}` does.
private func initialize(_ session: CardSession) throws {
    let card = try #require(session.card)
    try session.select(card)
    try session.initialize(card, pin: SecretBytes(pin), puk: SecretBytes(puk), pairingPassword: SecretBytes(password), duress: nil,
                           pinRetries: nil, pukRetries: nil)
}

/// A fresh software card of `applet`, initialised, in a reader of its own (pairings kept in memory).
private func cardInReader(_ applet: AppletVersion, caKey: PrivateKey? = nil, slots: Int = 10) throws -> OneCardReader {
    let reader = OneCardReader(try SoftKeycard(options: SoftKeycardOptions(appletVersion: applet, pairingSlots: slots, caKey: caKey)))
    var request = CardOpenRequest(reader: reader.name)
    request.pairingStore = .memory
    request.trustedCAKeys = [(caKey ?? SoftKeycard.testCAKey()).publicKey]
    try initialize(try CardOpener.open(request, readers: [reader], frontEnd: .lua))
    return reader
}

/// The request for `reader`'s card, trusting the software card's test CA unless told otherwise.
private func request(_ reader: OneCardReader, trusting keys: [PublicKey] = [SoftKeycard.testCAKey().publicKey]) -> CardOpenRequest {
    var request = CardOpenRequest(reader: reader.name)
    request.pairingStore = .memory
    request.trace = nil
    request.trustedCAKeys = keys
    return request
}

/// The card opener against the software cards, for both front ends (the layer `card.open{}` and every card command share).
@Suite(.serialized) struct CardOpenerTests {
    init() {
        // No test here may find a PIN in the environment or a terminal to ask on.
        unsetenv("KEYHOST_PIN")
        unsetenv("KEYHOST_PAIRING_PASSWORD")
        SecretInput.terminalPath = "/nonexistent/tty"
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func opensForEitherFrontEnd(_ applet: AppletVersion) throws {
        let reader = try cardInReader(applet)
        for frontEnd in [CardFrontEnd.lua, .commandLine()] {
            let connection = try CardConnection(request(reader), readers: [reader], frontEnd: frontEnd, pin: pin, pairingPassword: password,
                                                requirement: .initialized)
            #expect(connection.session.pinVerified)
            #expect(connection.readerName == reader.name)
            #expect(connection.apduCount > 0)
            connection.close()
        }
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func eachFrontEndSaysHowToGiveTheMissingPIN(_ applet: AppletVersion) throws {
        let reader = try cardInReader(applet)
        func missing(_ frontEnd: CardFrontEnd) throws -> CardServiceError {
            let error = #expect(throws: CardServiceError.self) {
                try CardConnection(request(reader), readers: [reader], frontEnd: frontEnd, pairingPassword: password, requirement: .initialized)
            }
            return try #require(error)
        }
        let lua = try missing(.lua)
        #expect(lua.kind == "no_secret")
        #expect(lua.text == "no PIN given: pass pin = ..., set KEYHOST_PIN, or run keyhost on a terminal to be asked")
        let commandLine = try missing(.commandLine())
        #expect(commandLine.kind == "no_secret")
        #expect(commandLine.text.contains("KEYHOST_PIN") && commandLine.text.contains("--pin-env VAR"))
        #expect(!commandLine.text.contains("pass pin"))
        unsetenv("KEYHOST_SERVICES_TEST_PIN")
        let named = try missing(.commandLine(pinVariable: "KEYHOST_SERVICES_TEST_PIN"))
        #expect(named.text.contains("KEYHOST_SERVICES_TEST_PIN is unset or empty") && named.text.contains("--pin-env"))
        setenv("KEYHOST_SERVICES_TEST_PIN", "123456", 1)
        defer { unsetenv("KEYHOST_SERVICES_TEST_PIN") }
        let connection = try CardConnection(request(reader), readers: [reader], frontEnd: .commandLine(pinVariable: "KEYHOST_SERVICES_TEST_PIN"),
                                            pairingPassword: password, requirement: .initialized)
        #expect(connection.session.pinVerified)
    }

    @Test func aBlankCardIsWordedForItsFrontEnd() throws {
        var virtual = CardOpenRequest(reader: "virtual")
        virtual.trace = nil
        let lua = #expect(throws: CardServiceError.self) { try CardConnection(virtual, readers: [], frontEnd: .lua, pin: pin) }
        #expect(lua?.kind == "not_initialized")
        #expect(lua?.text.contains("s:init{") == true)
        let commandLine = #expect(throws: CardServiceError.self) { try CardConnection(virtual, readers: [], frontEnd: .commandLine(), pin: pin) }
        #expect(commandLine?.text == "the virtual card is blank; set it up with keyhost card init (--reader virtual --card-state FILE)")
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func infoAndStatusRecordsAreOneShape(_ applet: AppletVersion) throws {
        let reader = try cardInReader(applet)
        let connection = try CardConnection(request(reader), readers: [reader], frontEnd: .lua,
                                            pin: pin, pairingPassword: password, requirement: .initialized)
        defer { connection.close() }
        let info = CardRecords.info(connection.selectInfo, reader: connection.readerName, trust: CardTrust(connection.card, connection.selectInfo))
        guard case .object(let fields) = info else { Issue.record("not an object"); return }
        #expect(fields.map(\.0) == ["reader", "initialized", "applet", "secure_channel", "instance_uid", "secure_channel_public_key",
                                    "free_pairing_slots", "key_uid", "has_master_key", "capabilities", "pin_retries", "identity_public_key",
                                    "identity_ca_key", "identity_trusted"])
        #expect(info["applet"] == .string("\(applet)"))
        #expect(info["identity_trusted"] == (applet == .v4_0 ? .bool(true) : .null))
        let status = try CardRecords.status(connection.card)
        guard case .object(let statusFields) = status else { Issue.record("not an object"); return }
        #expect(statusFields.map(\.0) == ["applet", "instance_uid", "key_uid", "pin_retries", "puk_retries", "has_master_key", "path"])
        #expect(status["pin_retries"] == .integer(3))
        // No key loaded: no current path to ask for (GET STATUS P1 01 is not sent).
        #expect(status["path"] == .null)
    }

    /// The 3.2 applet erases its temporary pairing at every SELECT: a host that paired there frees the other slots
    /// without selecting the card again.
    @Test func aHostOnTheTemporarySlotFreesTheOthers() throws {
        let reader = try cardInReader(.v3_2, slots: 2)
        let card = reader.card
        // Two other hosts take both slots.
        for _ in 0..<2 {
            let other = KeycardCommandSet(channel: card)
            _ = try other.select()
            _ = try other.pair(secret: PairingSecret.derive(password: SecretBytes(password)), mode: .persistent)
        }
        let session = try CardOpener.open(request(reader), readers: [reader], frontEnd: .lua)
        let command = try #require(session.card)
        let opened = try session.auto(command, pin: pin, password: password)
        #expect(opened["ephemeral"] == .bool(true))
        #expect(try session.unpairOthers(command, occupied: nil, pin: pin) == [0, 1])
        #expect(try command.select().freePairingSlots == 2)
        // The SELECT erased the temporary pairing, as on the applet.
        #expect(throws: KeycardError.self) { try command.openSecureChannel() }
        // The command line does not take the temporary slot unless told to (`unpair --others`).
        for _ in 0..<2 {
            let other = KeycardCommandSet(channel: card)
            _ = try other.select()
            _ = try other.pair(secret: PairingSecret.derive(password: SecretBytes(password)), mode: .persistent)
        }
        let full = #expect(throws: CardServiceError.self) {
            try CardConnection(request(reader), readers: [reader], frontEnd: .commandLine(), pin: pin, pairingPassword: password, requirement: .initialized)
        }
        #expect(full?.kind == "no_free_slot")
        #expect(full?.text.contains("keyhost card unpair --others") == true)
    }

    @Test func anUntrustedCardCannotProveItsIdentity() throws {
        let foreign = try PrivateKey(bytes: Hash.sha256(Array("a CA nobody here trusts".utf8)))
        let reader = try cardInReader(.v4_0, caKey: foreign)
        let untrusted = try CardConnection(request(reader, trusting: []), readers: [reader], frontEnd: .commandLine(), access: .selected, requirement: .initialized)
        let trust = CardTrust(untrusted.card, untrusted.selectInfo)
        #expect(!trust.isTrusted)
        #expect(trust.caKey == foreign.publicKey.compressed)
        let info = CardRecords.info(untrusted.selectInfo, reader: untrusted.readerName, trust: trust)
        #expect(info["identity_trusted"] == .bool(false))
        let refused = #expect(throws: CardServiceError.self) { try untrusted.session.proveIdentity(untrusted.card) }
        #expect(refused?.kind == "untrusted_card")
        #expect(refused?.text.contains("--trusted-ca \(Hex.encode(foreign.publicKey.compressed))") == true)
        untrusted.close()
        // Trusting its CA lets the card prove the identity key it shows.
        let trusted = try CardConnection(request(reader, trusting: [foreign.publicKey]), readers: [reader], frontEnd: .commandLine(),
                                         access: .selected, requirement: .initialized)
        #expect(CardTrust(trusted.card, trusted.selectInfo).isTrusted)
        try trusted.session.proveIdentity(trusted.card)
        trusted.close()
    }
}
