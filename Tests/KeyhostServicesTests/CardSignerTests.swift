import Testing
import KeyhostCard
import KeyhostCrypto
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

private let pin = Array("123456".utf8)
private let puk = Array("987654321098".utf8)
private let password = Array("KeycardTest".utf8)
private let hardened = DerivationPath.hardenedOffset
/// BIP32 test vector 1's seed and the published extended public keys below it.
private let vectorSeed: [UInt8] = Array(0...15)
private let vectorXpubs: [([UInt32], String)] = [
    ([hardened], "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw"),
    ([hardened, 1], "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"),
    ([hardened, 1, hardened | 2], "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5"),
]

private final class OneCardReader: CardReaderSource {
    let name = "Signer Reader 00 00"
    let card: SoftKeycard
    init(_ card: SoftKeycard) { self.card = card }
    func readerNames() throws -> [String] { [name] }
    func readerStates() throws -> [CardReaderState] { [CardReaderState(name: name, cardPresent: true)] }
    func connect(reader: String, options: CardConnectOptions) throws -> CardChannel { card }
}

/// A software card of `applet` holding BIP32 vector 1's seed, opened as a command opens it: PIN verified.
private func vectorCard(_ applet: AppletVersion) throws -> CardConnection {
    let reader = OneCardReader(try SoftKeycard(options: SoftKeycardOptions(appletVersion: applet)))
    var request = CardOpenRequest(reader: reader.name)
    request.pairingStore = .memory
    request.trace = nil
    request.trustedCAKeys = [SoftKeycard.testCAKey().publicKey]
    let session = try CardOpener.open(request, readers: [reader], frontEnd: .lua)
    let card = try #require(session.card)
    try session.select(card)
    try session.initialize(card, pin: SecretBytes(pin), puk: SecretBytes(puk), pairingPassword: SecretBytes(password), duress: nil,
                           pinRetries: nil, pukRetries: nil)
    try session.select(card)
    _ = try session.auto(card, pin: pin, password: password)
    try card.loadKey(seed: SecretBytes(vectorSeed))
    return try CardConnection(request, readers: [reader], frontEnd: .lua, pin: pin, pairingPassword: password)
}

/// The one signer interface over a Keycard: what every command that takes a card now goes through. Keys are
/// checked against BIP32's published vectors, signatures by recovery and verification, refusals by the APDUs
/// they did not send.
@Suite(.serialized) struct CardSignerTests {
    init() {
        unsetenv("KEYHOST_PIN")
        unsetenv("KEYHOST_PAIRING_PASSWORD")
        SecretInput.terminalPath = "/nonexistent/tty"
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func extendedKeysAreBIP32Vectors(_ applet: AppletVersion) throws {
        let connection = try vectorCard(applet)
        defer { connection.close() }
        let signer = connection.signer
        for (path, xpub) in vectorXpubs {
            let node = try CardExtendedKey.node(signer, components: path) { try CardExtendedKey.exportedKey(signer, components: $0) }
            #expect(node.extendedPublicKey(.xpub) == xpub, "at \(CardSignerError.pathText(path))")
        }
        #expect(signer.profile.family == "Keycard")
        #expect(signer.profile.abilities.contains(.schnorr) == (applet == .v4_0))
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func ecdsaSignaturesRecoverTheKeyAtThePath(_ applet: AppletVersion) throws {
        let connection = try vectorCard(applet)
        defer { connection.close() }
        let signer = connection.signer
        let path: [UInt32] = [hardened, 1]
        let expected = try HDNode(seed: vectorSeed).derive(DerivationPath(indexes: path, absolute: true)).publicKey
        let digest = Hash.sha256(Array("one signer interface".utf8))
        let signed = try signer.signECDSA(digest: digest, at: path)
        #expect(signed.publicKey == expected)
        #expect(try signed.signature.recoverPublicKey(digest: digest) == expected)
        #expect(try expected.verify(signed.signature.signature, digest: digest))
        #expect(signed.signature.signature.isLowS)
    }

    @Test func schnorrOnAThreeCardIsRefusedBeforeAnythingIsSent() throws {
        let connection = try vectorCard(.v3_2)
        defer { connection.close() }
        let before = connection.apduCount
        let error = #expect(throws: (any Error).self) {
            try connection.signer.signSchnorr(digest: [UInt8](repeating: 1, count: 32), at: [hardened], taproot: nil)
        }
        #expect(connection.apduCount == before)
        let thrown = try #require(error)
        let mapped = try #require(CardServiceError.from(thrown, command: nil) as? CardServiceError)
        #expect(mapped.kind == "unsupported")
        #expect(mapped.text.contains("ECDSA only"))
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func theMastersExtendedKeyIsRefusedBeforeAnythingIsSent(_ applet: AppletVersion) throws {
        let connection = try vectorCard(applet)
        defer { connection.close() }
        let before = connection.apduCount
        #expect(throws: (any Error).self) { try CardExtendedKey.node(connection.signer, components: []) }
        #expect(connection.apduCount == before)
        // The master's public key alone is fine: BIP32 vector 1's master key.
        let master = try HDNode(seed: vectorSeed).publicKey
        #expect(try CardExtendedKey.exportedKey(connection.signer, components: []) == master)
    }

    @Test func taprootSignaturesVerifyUnderTheOutputKeyAndCheckTheInternalKey() throws {
        let connection = try vectorCard(.v4_0)
        defer { connection.close() }
        let signer = connection.signer
        let path: [UInt32] = [hardened | 86, hardened, hardened, 0, 0]
        let internalKey = try HDNode(seed: vectorSeed).derive(DerivationPath(indexes: path, absolute: true)).publicKey.xOnly
        let digest = Hash.sha256(Array("taproot key path".utf8))
        let signed = try signer.signSchnorr(digest: digest, at: path, taproot: TaprootSpend(internalKey: internalKey, merkleRoot: nil))
        #expect(try internalKey.taprootOutputKey().verify(schnorr: signed.signature, message: digest))
        #expect(!internalKey.verify(schnorr: signed.signature, message: digest))

        // A PSBT that names another internal key for this path: the card's key is not it, and the signature is not used.
        let other = try HDNode(seed: vectorSeed).derive(DerivationPath(indexes: [hardened | 86, hardened, hardened, 0, 1], absolute: true)).publicKey.xOnly
        let error = #expect(throws: CardSignerError.self) {
            try signer.signSchnorr(digest: digest, at: path, taproot: TaprootSpend(internalKey: other, merkleRoot: nil))
        }
        #expect(error?.kind == "wrong_key")
    }
}
