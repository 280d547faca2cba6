import Foundation
import KeyhostCrypto
@testable import KeyhostCard

let testPIN = "123456"
/// Does not start with the PIN: the 3.2 alternate PIN defaults to the PUK's first 6 digits.
let testPUK = "987654321098"
let testPairingPassword = "KeycardTest"
/// The BIP39 test mnemonic "abandon ... about".
let testMnemonic = try! Mnemonic(entropy: [UInt8](repeating: 0, count: 16))

func hex(_ s: String) -> [UInt8] { try! Hex.decode(s) }

struct CardPair {
    let soft: SoftKeycard
    let client: KeycardCommandSet
    var isV2: Bool { soft.options.appletVersion.major >= 4 }
}

/// A fresh software card and a client that trusts its CA, both with seeded randomness.
func makeCard(_ version: AppletVersion, seed: String = "card", pairingSlots: Int = 10) throws -> CardPair {
    let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: version, pairingSlots: pairingSlots, randomSeed: Array(seed.utf8)))
    let client = KeycardCommandSet(channel: soft, random: SeededRandom(seed: "client-" + seed),
                                   trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
    return CardPair(soft: soft, client: client)
}

/// SELECT, INIT, SELECT, PAIR (v1), OPEN SECURE CHANNEL, VERIFY PIN.
func makeReadyCard(_ version: AppletVersion, seed: String = "card", pairingSlots: Int = 10) throws -> CardPair {
    let pair = try makeCard(version, seed: seed, pairingSlots: pairingSlots)
    let info = try pair.client.select()
    let v1 = info.secureChannelVersion == .v1
    try pair.client.initialize(pin: testPIN, puk: testPUK, pairingSecret: v1 ? PairingSecret.derive(password: testPairingPassword) : nil)
    try pair.client.select()
    if v1 { try pair.client.pair(password: testPairingPassword) }
    try pair.client.openSecureChannel()
    try pair.client.verifyPIN(testPIN)
    return pair
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-card-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
