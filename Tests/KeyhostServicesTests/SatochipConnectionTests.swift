import Testing
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

/// A reader holding one card (any channel), as a PC/SC reader would.
private final class Reader: CardReaderSource {
    let name = "Test Reader 00 00"
    let card: CardChannel?
    init(_ card: CardChannel?) { self.card = card }
    func readerNames() throws -> [String] { [name] }
    func readerStates() throws -> [CardReaderState] { [CardReaderState(name: name, cardPresent: true, atr: [0x3B, 0x00])] }
    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel {
        guard let card else { throw CardServiceError(kind: "transport", "the card is in exclusive use by another application") }
        return card
    }
}

/// A card that answers every command 9000 with `size` bytes of 0xFF: a hostile or broken card.
private final class Garbage: CardChannel {
    let size: Int
    init(_ size: Int) { self.size = size }
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU { ResponseAPDU(data: Array(repeating: 0xFF, count: size), statusWord: .success) }
}

private func request(_ reader: Reader, trusting keys: [PublicKey] = []) -> CardOpenRequest {
    var request = CardOpenRequest(reader: reader.name)
    request.trace = nil
    request.trustedCAKeys = keys
    return request
}

private func applets(_ record: Record) -> Record? {
    guard case .array(let rows) = record, let row = rows.first else { return nil }
    return row["applets"]
}

/// `card list`'s identification and `SatochipConnection` (what `keyhost card satochip …`, `card info` and the signer
/// opener share) against the software Satochip in a reader, a Keycard, and cards that answer nonsense.
@Suite(.serialized) struct SatochipConnectionTests {
    init() {
        unsetenv("KEYHOST_PIN")
        SecretInput.terminalPath = "/nonexistent/tty"
    }

    @Test func listIdentifiesEachFamilyAndSaysWhyACardCannotBeRead() throws {
        let satochip = try CardReaderState.listRecord([Reader(try SoftSatochip())], identify: true)
        #expect(applets(satochip) == .array([.object([("family", .string("satochip")), ("version", .string("0.12-0.6")), ("state", .string("not set up"))])]))
        let keycard = try CardReaderState.listRecord([Reader(try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v3_2)))], identify: true)
        #expect(applets(keycard) == .array([.object([("family", .string("keycard")), ("version", .string("")), ("state", .string("blank"))])]))

        let held = try CardReaderState.listRecord([Reader(nil)], identify: true)
        guard case .array(let rows) = held, let row = rows.first else { Issue.record("no row"); return }
        #expect(row["applets"] == .null)
        guard case .string(let problem)? = row["problem"] else { Issue.record("no problem said"); return }
        #expect(problem.contains("exclusive use"))
        // Without `identify` (Lua's old shape, other callers) nothing is probed.
        #expect(applets(try CardReaderState.listRecord([Reader(nil)])) == nil)
    }

    @Test(arguments: [0, 3, 64, 65, 255])
    func aCardAnsweringNonsenseIsUnreadableNotACrash(size: Int) throws {
        let record = try CardReaderState.listRecord([Reader(Garbage(size))], identify: true)
        guard case .array(let rows) = record, let row = rows.first else { Issue.record("no row"); return }
        // GET STATUS must be 4 to 64 bytes: outside that no Satochip is claimed, and opening one is refused, not a trap.
        var claimed = false
        if case .array(let found)? = row["applets"] { claimed = found.contains { $0["family"] == .string("satochip") } }
        #expect(claimed == (4...64).contains(size))
        if !(4...64).contains(size) {
            #expect(row["problem"] != .null || row["applets"] != .null)
            let garbage = Reader(Garbage(size))
            #expect(throws: CardServiceError.self) { try SatochipConnection.open(request(garbage), readers: [garbage], frontEnd: .lua) }
        }
    }

    @Test func setupPINsAndTrustThroughTheConnection() throws {
        let reader = Reader(try SoftSatochip())
        let connection = try SatochipConnection.open(request(reader), readers: [reader], frontEnd: .lua)
        #expect(throws: CardServiceError.self) { try connection.requireSetUp() }
        let made = try connection.setup(pin: SecretBytes(Array("1234".utf8)), puk: SecretBytes(Array("87654321".utf8)), pinTries: 3, pukTries: 2)
        #expect(made == .object([("setup_done", .bool(true)), ("pin_retries", .integer(3)), ("puk_retries", .integer(2))]))
        do {
            _ = try connection.setup(pin: SecretBytes(Array("1234".utf8)), puk: SecretBytes(Array("87654321".utf8)), pinTries: 3, pukTries: 2)
            Issue.record("a second SETUP went through")
        } catch let error as CardServiceError {
            #expect(error.kind == "already_initialized")
        }
        do {
            _ = try connection.verifiedPIN(SecretBytes(Array("0000".utf8)))
            Issue.record("a wrong PIN was accepted")
        } catch let error as CardServiceError {
            #expect(error.kind == "wrong_pin" && error.retriesLeft == 2 && error.command == "VERIFY PIN")
            #expect(!error.description.contains("0000"))
        }
        #expect(try connection.verifiedPIN(SecretBytes(Array("1234".utf8)))["pin_retries"] == .integer(3))

        // A card in a reader is not trusted by the software card's test CA unless it is named.
        let untrusted = try connection.certificate()
        #expect(!untrusted.isTrusted && untrusted.problem != nil && untrusted.deviceKey == nil)
        do {
            _ = try connection.requireTrusted("reset_seed")
            Issue.record("an untrusted card was let through")
        } catch let error as CardServiceError {
            #expect(error.kind == "untrusted_card" && error.text.contains("trusted_ca_keys"))
        }
        connection.close()
        let trusting = try SatochipConnection.open(request(reader, trusting: [SoftSatochip.testCAKey().publicKey]), readers: [reader], frontEnd: .lua)
        try trusting.verifyPIN(Array("1234".utf8))
        let trusted = try trusting.certificate()
        #expect(trusted.isTrusted && trusted.caKey == SoftSatochip.testCAKey().publicKey.compressed && trusted.deviceKey?.count == 33)
    }

    @Test func aKeycardIsNotASatochip() throws {
        let reader = Reader(try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v3_2)))
        do {
            _ = try SatochipConnection.open(request(reader), readers: [reader], frontEnd: .lua)
            Issue.record("a Keycard opened as a Satochip")
        } catch let error as CardServiceError {
            #expect(error.kind == "wrong_card")
        }
    }
}
